#include "daemon/gpud/record_helper.hpp"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char **environ;

namespace gos::gpud {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t max_answer = 1024;	// a line; the helper's are short
constexpr auto exit_within = std::chrono::seconds(5);	// a spawned helper, once it answered

// Waits for FD to be ready for EVENTS until WHEN; false at the deadline.
bool ready(int fd, short events, Clock::time_point when)
{
	for (;;) {
		auto left = std::chrono::duration_cast<std::chrono::milliseconds>(when - Clock::now()).count();
		if (left <= 0)
			return false;
		pollfd p{fd, events, 0};
		int n = ::poll(&p, 1, static_cast<int>(left));
		if (n > 0)
			return true;
		if (n < 0 && errno != EINTR)
			return false;
	}
}

HelperAnswer none(std::string why)
{
	return {HelperAnswer::Is::no_answer, std::move(why)};
}

} // namespace

HelperAnswer ask_record_helper_on(int fd, std::uint64_t job, std::int64_t start, const std::string &record,
				  std::chrono::milliseconds deadline)
{
	const Clock::time_point until = Clock::now() + deadline;
	std::string request = std::to_string(job) + " " + std::to_string(start) + "\n" + record;
	for (std::size_t sent = 0; sent < request.size();) {
		if (!ready(fd, POLLOUT, until))
			return none("the record helper took no request in time");
		ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return none(std::string("the record helper's connection: ") + std::strerror(errno));
		sent += static_cast<std::size_t>(n);
	}
	::shutdown(fd, SHUT_WR);
	std::string answer;
	char buf[256];
	while (answer.size() <= max_answer) {
		if (!ready(fd, POLLIN, until))
			return none("the record helper did not answer in time");
		ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return none(std::string("the record helper's connection: ") + std::strerror(errno));
		if (n == 0)
			break;
		answer.append(buf, static_cast<std::size_t>(n));
	}
	std::string line = answer.substr(0, answer.find('\n'));
	if (answer.find('\n') == std::string::npos || line.size() > max_answer)
		return none("the record helper's answer is no line: " + line.substr(0, 80));
	auto is = [&](const char *word) { return line.rfind(word, 0) == 0; };
	if (is("written"))
		return {HelperAnswer::Is::written, line};
	if (is("failed "))
		return {HelperAnswer::Is::failed, line};
	if (is("not ended"))
		return {HelperAnswer::Is::not_ended, line};
	if (is("refused "))
		return {HelperAnswer::Is::refused, line};
	return none("the record helper answered what it never says: " + line.substr(0, 80));
}

HelperAnswer ask_record_helper(const std::string &path, std::uint64_t job, std::int64_t start,
			       const std::string &record, std::chrono::milliseconds deadline)
{
	sockaddr_un addr{};
	if (path.size() >= sizeof addr.sun_path)
		return none("the record helper's socket path is too long: " + path);
	addr.sun_family = AF_UNIX;
	std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
	int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return none(std::string("socket: ") + std::strerror(errno));
	if (::connect(fd, reinterpret_cast<const sockaddr *>(&addr), sizeof addr) != 0) {
		HelperAnswer a = none("cannot reach the record helper at " + path + ": " + std::strerror(errno));
		::close(fd);
		return a;
	}
	HelperAnswer a = ask_record_helper_on(fd, job, start, record, deadline);
	::close(fd);
	return a;
}

HelperAnswer ask_record_helper_spawned(const std::string &program, const std::string &user, std::uint64_t job,
				       std::int64_t start, const std::string &record, std::chrono::milliseconds deadline,
				       int *status)
{
	int pair[2];
	if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
		return none(std::string("socketpair: ") + std::strerror(errno));
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pair[1], 0);
	posix_spawn_file_actions_adddup2(&fa, pair[1], 1);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	std::string arg0 = program, mode = "--serve-record", who = user;
	char *argv[] = {arg0.data(), mode.data(), who.data(), nullptr};
	pid_t pid = 0;
	int err = ::posix_spawn(&pid, program.c_str(), &fa, nullptr, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	::close(pair[1]);
	if (err) {
		::close(pair[0]);
		return none("cannot run " + program + ": " + std::strerror(err));
	}
	HelperAnswer a = ask_record_helper_on(pair[0], job, start, record, deadline);
	::close(pair[0]);
	// The helper has answered, or is past the deadline: nothing more is
	// wanted of it but its exit, which it gets a few seconds for (its
	// libslurm closing), not forever.
	int st = 0;
	auto until = Clock::now() + (a.is == HelperAnswer::Is::no_answer ? Clock::duration(0) : exit_within);
	for (;;) {
		pid_t r = ::waitpid(pid, &st, WNOHANG);
		if (r == pid || (r < 0 && errno != EINTR))
			break;
		if (Clock::now() >= until) {
			::kill(pid, SIGKILL);
			while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
			}
			break;
		}
		::poll(nullptr, 0, 10);
	}
	if (status)
		*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return a;
}

} // namespace gos::gpud
