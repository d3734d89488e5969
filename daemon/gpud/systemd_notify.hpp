// systemd's notify protocol (sd_notify(3)): NAME=value lines in one
// datagram to $NOTIFY_SOCKET, for Type=notify (READY=1 once the sockets
// listen), the watchdog (WATCHDOG=1 from the event loop) and STATUS=.
// Written here rather than linked from libsystemd: the protocol is one
// sendto(), documented as stable for other implementations, and the
// daemon then loads nothing of systemd's.
#pragma once

#include <sys/socket.h>
#include <sys/un.h>

#include <chrono>
#include <optional>
#include <string>

#include "common/util/rate_limit.hpp"

namespace gos::gpud {

class SystemdNotify {
public:
	// Read from the environment, which it then clears, so that the programs
	// the daemon runs never speak for it. Without NOTIFY_SOCKET (not started
	// by systemd, or Type=simple) it is inactive and send() does nothing.
	SystemdNotify();
	~SystemdNotify();
	SystemdNotify(const SystemdNotify &) = delete;
	SystemdNotify &operator=(const SystemdNotify &) = delete;

	bool active() const { return fd_ >= 0; }
	// How often to ping: half of WATCHDOG_USEC, when systemd watches this
	// process (WATCHDOG_PID, if given, is ours).
	std::optional<std::chrono::microseconds> ping_period() const { return ping_period_; }
	// Sends STATE (lines of NAME=value); a failure is logged, never thrown:
	// systemd going away must not stop the daemon.
	void send(const std::string &state);

private:
	int fd_ = -1;
	sockaddr_un addr_{};
	socklen_t addr_len_ = 0;
	std::optional<std::chrono::microseconds> ping_period_;
	RateLimit log_{std::chrono::seconds(60)};
};

} // namespace gos::gpud
