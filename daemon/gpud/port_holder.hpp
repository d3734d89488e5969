// Who holds a TCP port on this host, for the log when the job-wide door
// cannot bind its own (issue 50: a user may take it while the daemon
// restarts). /proc/net/tcp and tcp6 are readable by every user and name each
// socket's owner.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <sys/types.h>

namespace gos::gpud {

// The owners of the sockets bound to local port PORT, listening or not, as
// /proc/net/tcp's TEXT (or tcp6's) lists them: each uid once.
std::vector<uid_t> port_holders_in(const std::string &text, std::uint16_t port);

// The same, read from this host's /proc/net/tcp and /proc/net/tcp6;
// " (held by uid N (name), ...)" for a log line, or "" if none is found.
std::string port_holders(std::uint16_t port);

} // namespace gos::gpud
