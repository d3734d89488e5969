// The job-wide door's socket (docs/jobwide.md, "The channel"): TCP on
// jobwide.port, one frame per connection, answered with one line. Each
// connection passes the door's limits first (door_limits.hpp), has 5 s for
// its whole frame, and is refused on its header when the header says too
// much; then checks 2 to 5 (jobwide_door.hpp): admit on the event loop,
// open on a worker (the address lookup and munged both block), take on
// the event loop again. The writer and the node table are the event
// loop's alone.
//
// Each refusal is counted by reason (refused()) and logged at most once a
// minute per reason, naming the peer, the claimed node and the job.
#pragma once

#include <utility>	// before asio: Boost 1.74 needs std::exchange

#include <boost/asio.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "common/util/rate_limit.hpp"
#include "daemon/gpud/door_limits.hpp"
#include "daemon/gpud/jobwide_door.hpp"

namespace gos::gpud {

struct ListenerSettings {
	std::string address;	// numeric; empty: every address (IPv6 and IPv4)
	std::uint16_t port = 6828;	// 0: the kernel picks one (tests)
	DoorSettings limits;
	std::chrono::milliseconds frame_within{5000};
};

class JobwideListener {
public:
	// A part that reached its run after the record was made.
	using Late = std::function<void(const jobwide::Frame &, const jobwide::Payload &)>;

	// Binds and listens; throws boost::system::system_error when it cannot.
	// WORKERS runs open_frame; SAME_ADDRESS and UNSEAL are its checks 3
	// and 4 (is_node_address and munge::decode in the daemon).
	JobwideListener(boost::asio::io_context &io, boost::asio::thread_pool &workers, ListenerSettings settings,
			JobwideWriter &writer, NodeTable &nodes, SameAddress same_address, Unseal unseal, Late late);
	~JobwideListener();
	JobwideListener(const JobwideListener &) = delete;
	JobwideListener &operator=(const JobwideListener &) = delete;

	std::uint16_t port() const;
	// Refusals so far, by reason (the exporter's
	// gpuoversub_jobwide_refused_total{reason}), busy answers included as
	// "busy_*".
	const std::map<std::string, std::uint64_t> &refused() const { return refused_; }
	std::uint64_t taken() const { return taken_; }

private:
	class Door;
	void accept();
	void count(const std::string &reason, const std::string &peer, const std::string &node, std::uint32_t job);

	boost::asio::io_context &io_;
	boost::asio::thread_pool &workers_;
	ListenerSettings settings_;
	JobwideWriter &writer_;
	NodeTable &nodes_;
	SameAddress same_address_;
	Unseal unseal_;
	Late late_;
	DoorLimits limits_;
	boost::asio::ip::tcp::acceptor acceptor_;
	std::map<std::string, std::uint64_t> refused_;
	std::map<std::string, RateLimit> logged_;	// by reason: a fixed set
	std::uint64_t taken_ = 0;
	std::shared_ptr<bool> alive_;	// false once destroyed: workers' results are dropped
};

} // namespace gos::gpud
