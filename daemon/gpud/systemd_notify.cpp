#include "daemon/gpud/systemd_notify.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "common/util/log.hpp"

namespace gos::gpud {

namespace {

// A decimal number and nothing else, or nullopt.
std::optional<unsigned long long> number(const char *text)
{
	if (!text || !*text)
		return std::nullopt;
	std::string_view s(text);
	unsigned long long v = 0;
	auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
	if (ec != std::errc() || end != s.data() + s.size())
		return std::nullopt;
	return v;
}

} // namespace

SystemdNotify::SystemdNotify()
{
	const char *socket = std::getenv("NOTIFY_SOCKET");
	std::string path = socket ? socket : "";
	const char *watchdog_usec = std::getenv("WATCHDOG_USEC");
	auto usec = number(watchdog_usec);
	const char *watchdog_pid = std::getenv("WATCHDOG_PID");
	auto pid = number(watchdog_pid);
	// systemd names the process it watches; a WATCHDOG_PID of another (a
	// wrapper's) is not a request to this one.
	bool ours = !watchdog_pid || (pid && *pid == static_cast<unsigned long long>(::getpid()));
	if (watchdog_usec && (!usec || *usec == 0))
		GOS_LOG(log::warning, "WATCHDOG_USEC '" << watchdog_usec << "' is not a number of microseconds; no watchdog pings");
	for (const char *name : {"NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"})
		::unsetenv(name);
	if (path.empty())
		return;
	// A path, or '@' for the abstract namespace; systemd's other forms
	// (vsock:) are for guests talking to their host, not for a node daemon.
	if ((path[0] != '/' && path[0] != '@') || path.size() >= sizeof addr_.sun_path) {
		GOS_LOG(log::error, "NOTIFY_SOCKET '" << path << "' is not a socket path this daemon can use; "
				    "systemd will not hear that it is ready");
		return;
	}
	addr_.sun_family = AF_UNIX;
	std::memcpy(addr_.sun_path, path.data(), path.size());
	if (path[0] == '@')
		addr_.sun_path[0] = '\0';
	addr_len_ = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size() + (path[0] == '@' ? 0 : 1));
	fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd_ < 0) {
		GOS_LOG(log::error, "cannot make a socket to talk to systemd: " << std::strerror(errno));
		return;
	}
	if (usec && *usec > 0 && ours)
		ping_period_ = std::chrono::microseconds(std::max<unsigned long long>(*usec / 2, 1));
}

SystemdNotify::~SystemdNotify()
{
	if (fd_ >= 0)
		::close(fd_);
}

void SystemdNotify::send(const std::string &state)
{
	if (fd_ < 0)
		return;
	if (::sendto(fd_, state.data(), state.size(), MSG_NOSIGNAL, reinterpret_cast<const sockaddr *>(&addr_), addr_len_) < 0)
		GOS_LOG_LIMITED(log_, log::warning, "cannot tell systemd '" << state.substr(0, state.find('\n'))
									    << "': " << std::strerror(errno));
}

} // namespace gos::gpud
