// Sends one request to the record helper with gpuoversubd's own client
// (record_helper.cpp), and prints its answer line.
//   gos_record_request --connect SOCKET JOB START <RECORD
//       to the helper's socket (gpuoversub-record.socket); exit 0 when
//       an answer came, 1 when none did.
//   gos_record_request --spawn PROGRAM USER JOB START <RECORD
//       runs PROGRAM --serve-record USER on one end of a socketpair, as
//       systemd's Accept=yes would (its peer is this process), and exits
//       with its status.
//   gos_record_request --hold SOCKET N
//       opens N connections to the helper's socket and sends nothing, as a
//       flood would (issue 50, finding 9); prints "open K after 1 s" (those
//       systemd let in: MaxConnections), then "all closed after S s" once
//       every one is closed (the helper's 5 s for a request), or "open K
//       after 30 s"; exit 0 when all closed.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/gpud/record_helper.hpp"

using namespace std::chrono_literals;

namespace {

// How many of FDS the other end has not closed; what it said is read and
// dropped, and a closed one is closed here too (-1).
std::size_t still_open(std::vector<int> &fds)
{
	std::size_t open = 0;
	for (int &fd : fds) {
		char buf[256];
		ssize_t got = 1;
		while (fd >= 0 && (got = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT)) > 0)
			;
		if (fd >= 0 && got == 0) {
			::close(fd);
			fd = -1;
		}
		open += fd >= 0;
	}
	return open;
}

int hold(const char *path, int n)
{
	std::vector<int> fds;
	sockaddr_un at{};
	at.sun_family = AF_UNIX;
	std::strncpy(at.sun_path, path, sizeof at.sun_path - 1);
	for (int i = 0; i < n; i++) {
		int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr *>(&at), sizeof at) != 0) {
			std::perror(path);
			return 2;
		}
		fds.push_back(fd);
	}
	const auto t0 = std::chrono::steady_clock::now();
	std::this_thread::sleep_for(1s);
	std::printf("open %zu after 1 s\n", still_open(fds));
	std::fflush(stdout);
	while (still_open(fds) > 0) {
		if (std::chrono::steady_clock::now() - t0 > 30s) {
			std::printf("open %zu after 30 s\n", still_open(fds));
			return 1;
		}
		std::this_thread::sleep_for(100ms);
	}
	std::printf("all closed after %.1f s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc == 4 && std::strcmp(argv[1], "--hold") == 0)
		return hold(argv[2], std::atoi(argv[3]));
	bool connect = argc == 5 && std::strcmp(argv[1], "--connect") == 0;
	bool spawn = argc == 6 && std::strcmp(argv[1], "--spawn") == 0;
	if (!connect && !spawn) {
		std::fprintf(stderr, "usage: gos_record_request --connect SOCKET JOB START <RECORD\n"
				     "       gos_record_request --spawn PROGRAM USER JOB START <RECORD\n"
				     "       gos_record_request --hold SOCKET N\n");
		return 2;
	}
	std::string record((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
	std::uint64_t job = std::strtoull(argv[argc - 2], nullptr, 10);
	std::int64_t start = std::strtoll(argv[argc - 1], nullptr, 10);
	if (connect) {
		gos::gpud::HelperAnswer a = gos::gpud::ask_record_helper(argv[2], job, start, record, 30s);
		std::printf("%s\n", a.line.c_str());
		return a.is == gos::gpud::HelperAnswer::Is::no_answer;
	}
	int status = 0;
	gos::gpud::HelperAnswer a =
		gos::gpud::ask_record_helper_spawned(argv[2], argv[3], job, start, record, 30s, &status);
	std::printf("%s\n", a.line.c_str());
	return status;
}
