// gpuoversubd as a systemd Type=notify service (issue 32), through the
// protocol itself (sd_notify(3)): a datagram socket named by NOTIFY_SOCKET,
// as systemd makes one. READY=1 comes only once the sockets answer,
// STATUS= says what the daemon holds, WATCHDOG=1 comes from the event loop
// at half of WATCHDOG_USEC, RELOADING=1 and READY=1 frame a reload, and
// STOPPING=1 precedes the end.
#define BOOST_TEST_MODULE service
#include <boost/test/unit_test.hpp>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstring>
#include <string>
#include <thread>

#include "daemon_harness.hpp"

using namespace gos_test;
using namespace std::chrono_literals;

namespace {

// systemd's end of the protocol: a datagram socket at PATH ('@' for the
// abstract namespace).
struct NotifySocket {
	int fd = -1;
	std::string path;
	explicit NotifySocket(std::string p) : path(std::move(p))
	{
		fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		BOOST_REQUIRE(fd >= 0);
		sockaddr_un a{};
		a.sun_family = AF_UNIX;
		std::memcpy(a.sun_path, path.data(), path.size());
		if (path[0] == '@')
			a.sun_path[0] = '\0';
		auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size() + (path[0] == '@' ? 0 : 1));
		BOOST_REQUIRE_MESSAGE(::bind(fd, reinterpret_cast<sockaddr *>(&a), len) == 0,
				      "bind " << path << ": " << std::strerror(errno));
	}
	~NotifySocket() { ::close(fd); }
	// The next datagram, or "" when none came within LIMIT.
	std::string next(std::chrono::milliseconds limit = 5s)
	{
		pollfd p{fd, POLLIN, 0};
		if (::poll(&p, 1, static_cast<int>(limit.count())) <= 0)
			return "";
		char buf[4096];
		ssize_t n = ::recv(fd, buf, sizeof buf, 0);
		return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
	}
	// Datagrams until one holds LINE (returned, with all seen in SEEN); ""
	// when none did within LIMIT.
	std::string until(const std::string &line, std::string *seen = nullptr, std::chrono::milliseconds limit = 5s)
	{
		auto end = std::chrono::steady_clock::now() + limit;
		for (;;) {
			auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
			if (left.count() <= 0)
				return "";
			std::string d = next(left);
			if (seen)
				*seen += d + "|";
			if (("\n" + d + "\n").find("\n" + line + "\n") != std::string::npos)
				return d;
		}
	}
	void drain()
	{
		while (!next(0ms).empty()) {
		}
	}
};

} // namespace

BOOST_AUTO_TEST_CASE(ready_comes_once_the_sockets_answer_with_what_the_daemon_holds)
{
	DaemonUnderTest d("", false);
	NotifySocket systemd(d.dir + "/notify");
	d.environment = {"NOTIFY_SOCKET=" + systemd.path};
	d.spawn();
	std::string seen;
	std::string ready = systemd.until("READY=1", &seen);
	BOOST_REQUIRE_MESSAGE(!ready.empty(), "no READY=1; datagrams: " << seen << "\n" << d.log());
	BOOST_CHECK_NO_THROW(d.status());	// at once: ready means the socket answers
	BOOST_TEST(ready.find("STATUS=serving 0 jobs and 0 agents on 1 GPU") != std::string::npos, ready);
	d.register_step(42);
	BOOST_TEST(!systemd.until("STATUS=serving 1 job and 0 agents on 1 GPU", &seen).empty(), seen);
}

BOOST_AUTO_TEST_CASE(the_event_loop_pings_the_watchdog_at_half_its_period)
{
	DaemonUnderTest d("", false);
	NotifySocket systemd(d.dir + "/notify");
	d.environment = {"NOTIFY_SOCKET=" + systemd.path, "WATCHDOG_USEC=200000"};
	d.start();
	// Ten pings, every 100 ms: within 5 s even on a busy machine, where
	// the period without a watchdog (1 s) would take 10.
	auto end = std::chrono::steady_clock::now() + 5s;
	for (int i = 0; i < 10; i++) {
		auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
		BOOST_REQUIRE_MESSAGE(left > 0ms && !systemd.until("WATCHDOG=1", nullptr, left).empty(),
				      "ping " << i << " of 10 not within 5 s\n" << d.log());
	}
	// A stopped daemon pings no more (systemd then restarts it), and pings
	// again once it runs.
	d.signal(SIGSTOP);
	std::this_thread::sleep_for(50ms);	// a ping already sent may still arrive
	systemd.drain();
	BOOST_TEST(systemd.next(500ms).empty());	// an observation window, not a wait
	d.signal(SIGCONT);
	BOOST_TEST(!systemd.until("WATCHDOG=1").empty());
}

BOOST_AUTO_TEST_CASE(a_watchdog_for_another_process_is_not_pinged)
{
	DaemonUnderTest d("", false);
	NotifySocket systemd(d.dir + "/notify");
	d.environment = {"NOTIFY_SOCKET=" + systemd.path, "WATCHDOG_USEC=200000", "WATCHDOG_PID=1"};
	d.start();
	std::string seen;
	BOOST_REQUIRE(!systemd.until("READY=1", &seen).empty());
	systemd.until("WATCHDOG=1", &seen, 1s);	// an observation window, not a wait
	BOOST_TEST(seen.find("WATCHDOG=1") == std::string::npos, seen);
}

BOOST_AUTO_TEST_CASE(a_reload_is_framed_and_a_stop_announced)
{
	DaemonUnderTest d("", false);
	NotifySocket systemd("@gos-notify-" + std::to_string(::getpid()));	// the abstract namespace
	d.environment = {"NOTIFY_SOCKET=" + systemd.path};
	d.start();
	BOOST_REQUIRE(!systemd.until("READY=1").empty());
	d.signal(SIGHUP);
	std::string reloading = systemd.until("RELOADING=1");
	BOOST_TEST(reloading.find("MONOTONIC_USEC=") != std::string::npos, reloading);
	BOOST_TEST(!systemd.until("READY=1").empty(), d.log());
	int status = d.stop(SIGTERM);
	BOOST_TEST(WIFEXITED(status));
	BOOST_TEST(!systemd.until("STOPPING=1").empty(), d.log());
}

BOOST_AUTO_TEST_CASE(a_notify_socket_it_cannot_use_is_logged_and_the_daemon_serves)
{
	DaemonUnderTest d("", false);
	d.environment = {"NOTIFY_SOCKET=relative/notify", "WATCHDOG_USEC=soon"};
	d.start();
	BOOST_CHECK_NO_THROW(d.status());
	BOOST_TEST(d.log().find("NOTIFY_SOCKET 'relative/notify' is not a socket path") != std::string::npos, d.log());
	BOOST_TEST(d.log().find("WATCHDOG_USEC 'soon' is not a number of microseconds") != std::string::npos, d.log());
}
