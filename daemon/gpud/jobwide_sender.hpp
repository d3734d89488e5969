// One try of the job-wide outbox (jobwide_outbox.hpp): a frame sent to a
// writer's door and its answer line read, on the event loop, within a
// deadline. The connection leaves from this node's own NodeAddr, so that
// the writer's address check (check 3) sees the address Slurm has for it
// on a node with several.
#pragma once

#include <utility>	// before asio: Boost 1.74 needs std::exchange

#include <boost/asio.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "daemon/gpud/jobwide_outbox.hpp"

namespace gos::gpud {

struct SendTo {
	std::string host;	// the writer's NodeAddr: numeric, or a name
	std::uint16_t port = 6828;
	std::string from;	// this node's NodeAddr when numeric; empty: any
	std::chrono::milliseconds within{10000};
};

// DONE gets what the try heard (taken: ok or dup; refused: with its
// reason; busy: busy, or no connection, no answer, or one that is no
// answer) and, for the log, why.
using Sent = std::function<void(Heard heard, const std::string &why)>;
void send_frame(boost::asio::io_context &io, const SendTo &to, const std::string &frame, Sent done);

} // namespace gos::gpud
