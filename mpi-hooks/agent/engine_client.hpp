// The agent's side of the engine: the calls it makes for its process, and
// the orders that come back. One implementation talks to gpuoversubd's
// socket; the other, where the daemon says its engine is gpuoversub.ko,
// to /dev/gpuoversub (and to the daemon for the job's view).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gpuoversub/abi.h>

namespace gos::agent {

class EngineClient {
public:
	using OrderHandler = std::function<void(const gos_wire_order &)>;
	using LostHandler = std::function<void()>;
	virtual ~EngineClient() = default;

	// Every call returns 0 or -errno; -ENOTCONN once the engine is gone.
	// error() holds the engine's explanation of the last failure.
	virtual int hello(const gos_req_hello &req, gos_rep_hello &rep) = 0;
	virtual int alloc(const gos_req_alloc &req, gos_rep_alloc &rep) = 0;
	virtual int free(std::uint64_t buffer) = 0;
	virtual int set_priority(const gos_req_priority &req) = 0;
	virtual int placement(std::uint64_t buffer, std::uint32_t first, std::uint32_t count,
			      std::vector<std::uint8_t> &states) = 0;
	// Acknowledges a batch of orders, each carried out (ok 1) or failed:
	// one result per acknowledgement, in order, 0 or -errno (-ENOENT for an
	// order the engine gave up on).
	virtual std::vector<int> orders_done(const std::vector<gos_req_order_done> &acks) = 0;
	virtual int meminfo(std::uint32_t gpu, gos_rep_meminfo &rep) = 0;
	virtual int activity(std::uint32_t gpu, std::uint32_t launches) = 0;	// not waited for
	virtual int rank(const gos_req_rank &req) = 0;
	// Sends records in frames of at most GOS_RANK_REPORT_MAX.
	virtual int rank_report(const gos_rank_record *records, std::size_t count) = 0;
	virtual std::string error() const = 0;
	// Closes without telling the engine: for a forked child, whose
	// connection belongs to its parent.
	virtual void abandon() = 0;
};

// What the job may still allocate on a GPU, in its cuMemGetInfo view.
inline std::uint64_t headroom(const gos_rep_meminfo &info)
{
	return info.allowed > info.used ? info.allowed - info.used : 0;
}

// Connects to gpuoversubd. Orders arrive on a thread of the client's own;
// lost() runs once when the connection drops. Throws std::runtime_error
// with the reason when the socket cannot be reached.
std::unique_ptr<EngineClient> connect_daemon(const std::string &socket, EngineClient::OrderHandler order,
					     EngineClient::LostHandler lost);

// After a hello whose reply says GOS_HELLO_FLAG_KERNEL: the engine calls go
// to this process's own /dev/gpuoversub file, orders come from it, and
// `daemon` (which said hello) keeps the rest, reconnected if the daemon
// restarts. Throws std::runtime_error when the device cannot be used.
std::unique_ptr<EngineClient> attach_kernel(std::unique_ptr<EngineClient> daemon, const std::string &socket,
					    const gos_req_hello &hello, std::uint64_t chunk_size,
					    EngineClient::OrderHandler order);

} // namespace gos::agent
