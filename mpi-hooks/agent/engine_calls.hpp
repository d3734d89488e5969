// The engine's calls, as the agent makes them for its process, and the
// orders that come back. Two kinds implement them: gpuoversubd's socket
// (DaemonClient), and, where the daemon says its engine is gpuoversub.ko,
// this process's own /dev/gpuoversub file (kernel_client.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gpuoversub/abi.h>

namespace gos::agent {

class DaemonCalls;

class EngineCalls {
public:
	using OrderHandler = std::function<void(const gos_wire_order &)>;
	virtual ~EngineCalls() = default;

	// Every call returns 0 or -errno; -ENOTCONN once the engine is gone.
	// error() holds the engine's explanation of the last failure.
	virtual int alloc(const gos_req_alloc &req, gos_rep_alloc &rep) = 0;
	virtual int free(std::uint64_t buffer) = 0;
	virtual int set_priority(const gos_req_priority &req) = 0;
	virtual int placement(std::uint64_t buffer, std::uint32_t first, std::uint32_t count,
			      std::vector<std::uint8_t> &states) = 0;
	// Acknowledges a batch of orders, each carried out (ok 1) or failed:
	// one result per acknowledgement, in order, 0 or -errno (-ENOENT for an
	// order the engine gave up on).
	virtual std::vector<int> orders_done(const std::vector<gos_req_order_done> &acks) = 0;
	virtual std::string error() const = 0;
	// Closes without telling the engine: for a forked child, whose
	// connection belongs to its parent.
	virtual void abandon() = 0;
};

// After a hello whose reply says GOS_HELLO_FLAG_KERNEL: the engine's calls
// go to this process's own /dev/gpuoversub file and orders come from it;
// `daemon` (which said hello) tells the host node of each GPU. Throws
// std::runtime_error when the device cannot be used.
std::unique_ptr<EngineCalls> attach_kernel(std::shared_ptr<DaemonCalls> daemon, std::uint64_t chunk_size,
					   EngineCalls::OrderHandler order);

} // namespace gos::agent
