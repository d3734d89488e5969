// The daemon's connections as the daemon sees them: who is on the other
// end and, once it said hello, which job's process it is.
//
// The table owns every session. A connection holds only its SessionId, a
// handle that is valid from open() until the connection calls close().
// Sessions are closed only from the event loop, never from inside a call
// into the daemon (a connection cut off for not reading is closed later,
// by the loop), so a Session& taken during one call stays valid for it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "common/proto/wire.hpp"
#include "daemon/gpud/identity.hpp"

namespace gos::gpud {

using SessionId = std::uint32_t;

struct Session {
	SessionId id = 0;
	Peer peer;
	// Queues bytes for the peer; never calls back into the daemon.
	std::function<void(proto::Bytes)> send;
	// Closes the connection later, from the loop (when its job ends); may be empty.
	std::function<void()> hang_up;
	// Set by HELLO: the job the process belongs to (0 before, and after the
	// job ended) and the rank its counters go under.
	std::uint64_t job = 0;
	int rank = -1;
};

class SessionTable {
public:
	SessionId open(const Peer &peer, std::function<void(proto::Bytes)> send, std::function<void()> hang_up);
	void close(SessionId id);
	Session *find(SessionId id);	// null once closed
	std::vector<SessionId> of_job(std::uint64_t job) const;
	std::size_t agents() const;	// sessions that said hello
	std::set<pid_t> agent_pids() const;

private:
	std::map<SessionId, Session> sessions_;
	SessionId last_ = 0;
};

} // namespace gos::gpud
