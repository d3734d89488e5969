// gpuoversub-slurm-facts --serve-record USER: the root record helper
// behind gpuoversub-record.socket (docs/jobwide.md, "The root helper").
// gpuoversubd runs as USER and may not write AdminComment; root may. So
// the daemon connects to the helper's socket and sends one request:
//   JOB START\n
//   RECORD (to the end of its writing: shutdown(SHUT_WR))
// and the helper answers --write-record's line on the same connection.
// Only USER (or root) is served: its uid is the peer's, from SO_PEERCRED,
// never what the request says. The record itself is checked as
// --write-record checks it, and changes only gpuoversub's segment of the
// run's record.
#include "daemon/slurmfacts/serve_record.hpp"

#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "daemon/slurmfacts/write_record.hpp"

namespace gos::slurmfacts {
namespace {

constexpr std::size_t max_head = 64;	// "JOB START\n": two numbers
// A peer that connects and sends nothing, or never ends its writing,
// must not hold a root process: the request must come whole within
// request_within_s (issue 50, finding 9: 20 idle connections held 20 root
// processes for 60 s each), and slurmdbd then has serve_within_s.
constexpr unsigned request_within_s = 5, serve_within_s = 60;

// What the alarm answers, by the phase it ends: an answer of the unit's
// SuccessExitStatus=, so that no instance is left failed for a peer's sake.
volatile sig_atomic_t reading = 1;
// Once answered, the status: the alarm then ends the drain without a
// second line.
volatile sig_atomic_t answered_with = -1;

void out_of_time(int)
{
	if (answered_with >= 0)
		::_exit(answered_with);
	static constexpr char request[] = "refused no whole request within 5 s\n",
			      slurmdbd[] = "failed slurmdbd did not answer within 60 s\n";
	if (reading) {
		[[maybe_unused]] ssize_t n = ::write(1, request, sizeof request - 1);
		::_exit(4);
	}
	[[maybe_unused]] ssize_t n = ::write(1, slurmdbd, sizeof slurmdbd - 1);
	::_exit(1);
}

// The request's first line, read a byte at a time so that the record
// after it stays unread for write_record; empty when there is none.
std::string read_head()
{
	std::string head;
	char c = 0;
	while (head.size() < max_head) {
		ssize_t n = ::read(0, &c, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || c == '\n')
			return n > 0 ? head : "";
		head += c;
	}
	return "";
}

// Reads what the peer sent and no one read, up to a bound: closing on it
// unread would reset the connection, and the peer would lose the answer.
void drain()
{
	char buf[4096];
	for (std::size_t left = 64 * 1024; left > 0;) {
		ssize_t n = ::read(0, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		left -= std::min(left, static_cast<std::size_t>(n));
	}
}

int answered(int status)
{
	std::fflush(stdout);
	answered_with = status;
	drain();
	return status;
}

// A positive decimal number, as JOB and START are.
bool positive(const std::string &s)
{
	return !s.empty() && s.size() <= 20 && s[0] != '0' && s.find_first_not_of("0123456789") == std::string::npos;
}

} // namespace

int serve_record(const char *user, std::string (*init)())
{
	std::signal(SIGALRM, out_of_time);
	::alarm(request_within_s);
	ucred peer{};
	socklen_t len = sizeof peer;
	if (::getsockopt(0, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0) {
		std::fprintf(stderr, "gpuoversub-slurm-facts --serve-record: stdin is no Unix socket "
				     "(it runs from gpuoversub-record.socket, Accept=yes)\n");
		return 2;
	}
	passwd pw{}, *found = nullptr;
	std::vector<char> buf(16384);
	if (::getpwnam_r(user, &pw, buf.data(), buf.size(), &found) != 0 || !found) {
		std::printf("refused no user %s here\n", user);
		return answered(4);
	}
	if (peer.uid != 0 && peer.uid != found->pw_uid) {
		std::printf("refused uid %u is not %s\n", peer.uid, user);
		std::fprintf(stderr, "gpuoversub-slurm-facts --serve-record: refused pid %d, uid %u: only %s and root are served\n",
			     peer.pid, peer.uid, user);
		return answered(4);
	}
	std::string head = read_head();
	std::string::size_type space = head.find(' ');
	if (space == std::string::npos || !positive(head.substr(0, space)) || !positive(head.substr(space + 1))) {
		std::printf("refused the request's first line is not 'JOB START', two positive numbers\n");
		return answered(4);
	}
	std::string job = head.substr(0, space), start = head.substr(space + 1);
	return answered(write_record(job.c_str(), start.c_str(), init, [] {
		reading = 0;
		::alarm(serve_within_s);
	}));
}

} // namespace gos::slurmfacts
