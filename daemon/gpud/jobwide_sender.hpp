// One try of the job-wide outbox (jobwide_outbox.hpp): a frame sent to a
// writer's door and its answer line read, on the event loop, within a
// deadline. The connection leaves from this node's own NodeAddr, so that
// the writer's address check (check 3) sees the address Slurm has for it
// on a node with several, and from a reserved port. The answer is believed
// only when munged finds it sealed by the writer's daemon (issue 50: a
// user holding the writer's port while its daemon restarts).
#pragma once

#include <utility>	// before asio: Boost 1.74 needs std::exchange

#include <boost/asio.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <sys/types.h>

#include "common/jobwide/frame.hpp"
#include "daemon/gpud/jobwide_door.hpp"
#include "daemon/gpud/jobwide_outbox.hpp"

namespace gos::gpud {

struct SendTo {
	std::string host;	// the writer's NodeAddr: numeric, or a name
	std::uint16_t port = 6828;
	std::string from;	// this node's NodeAddr when numeric; empty: any
	std::chrono::milliseconds within{10000};
	// From a port below 1024, which only root (or CAP_NET_BIND_SERVICE)
	// can bind: a writer's door takes no other (jobwide.reserved_ports).
	bool reserved = true;
};

// Whom a sender believes: an answer sealed by munged for one of TRUSTED
// uids (the daemons' user, root), answering this part (job, start, node).
// Anything else (an unsealed line, another uid's seal, another part's
// answer, a replay) is not the writer's word, and counts as busy.
struct Believe {
	boost::asio::thread_pool *workers = nullptr;	// munged blocks: UNSEAL runs there
	Unseal unseal;
	std::vector<uid_t> trusted;
	jobwide::AnswerTo part;
};

// DONE gets what the try heard (taken: ok or dup; refused: with its
// reason; busy: busy, or no connection, no answer, or one not believed)
// and, for the log, why.
using Sent = std::function<void(Heard heard, const std::string &why)>;
void send_frame(boost::asio::io_context &io, const SendTo &to, const std::string &frame, Believe believe, Sent done);

} // namespace gos::gpud
