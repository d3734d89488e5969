// The job-wide door's socket (docs/jobwide.md, "The channel"): TCP on
// jobwide.port, one frame per connection, answered with one line. Each
// connection passes the door's limits first (door_limits.hpp), has 5 s for
// its whole frame, and is refused on its header when the header says too
// much; then checks 2 to 5 (jobwide_door.hpp): admit on the event loop,
// open on a worker (the address lookup and munged both block), take on
// the event loop again. The writer and the node table are the event
// loop's alone, and so is the last reference to a connection: a worker
// hands its own back with its result.
//
// Each refusal is counted by reason (refused()) and logged at most once a
// minute per reason, naming the peer, the claimed node and the job. A peer
// from an unreserved port is closed unanswered before any of this
// (reserved_only), and counted as unreserved_port.
// Every answer to a frame munged opened is sealed (frame.hpp,
// "sealed"), so that its sender can tell it from a squatter's.
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
	// Only peers from a port below 1024, which only root can bind
	// (jobwide.reserved_ports): a user's connections are closed as they
	// come, unread, and spend none of the door's limits.
	bool reserved_only = true;
};

// What the door counts, kept by its owner: a listener closed and opened
// again (a reload) counts on, as the exporter's counters must.
struct DoorCounts {
	std::map<std::string, std::uint64_t> refused;	// by reason, busy answers as "busy_*"
	std::uint64_t taken = 0;	// parts answered ok
};

class JobwideListener {
public:
	// A part that reached its run after the record was made.
	using Late = std::function<void(const jobwide::Frame &, const jobwide::Payload &)>;

	// Binds and listens; throws boost::system::system_error when it cannot.
	// WORKERS runs open_frame; SAME_ADDRESS and UNSEAL are its checks 3
	// and 4 (is_node_address and munge::decode in the daemon), and SEAL
	// seals the answer to a frame UNSEAL opened (munge::encode). The writer
	// and the node table must outlive the event loop's last handler, and
	// COUNTS the listener.
	JobwideListener(boost::asio::io_context &io, boost::asio::thread_pool &workers, ListenerSettings settings,
			JobwideWriter &writer, NodeTable &nodes, SameAddress same_address, Unseal unseal, Seal seal,
			Late late, DoorCounts &counts);
	// Stops accepting and closes the open connections; what is in flight
	// on a worker is dropped when it comes back.
	~JobwideListener();
	JobwideListener(const JobwideListener &) = delete;
	JobwideListener &operator=(const JobwideListener &) = delete;

	std::uint16_t port() const;
	// Refusals so far, by reason (the exporter's
	// gpuoversub_jobwide_refused_total{reason}), busy answers included as
	// "busy_*".
	const std::map<std::string, std::uint64_t> &refused() const;
	std::uint64_t taken() const;

private:
	class Door;
	struct State;
	std::shared_ptr<State> state_;	// shared with each connection, which may outlive this
};

} // namespace gos::gpud
