// Runs gpuoversub-slurm-facts for the background refresh: its output and
// error together through one pipe, read until it closes, the program killed
// when it outlives its deadline or the daemon stops.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cerrno>
#include <climits>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "daemon/gpud/slurm_facts.hpp"

extern char **environ;

namespace gos::gpud {
namespace {

std::string last_line(std::string out)
{
	out.erase(out.find_last_not_of('\n') + 1);
	return out.empty() ? "no output" : out.substr(out.rfind('\n') + 1);
}

std::vector<std::string> args_of(const FactsQuery &query)
{
	std::vector<std::string> args;
	if (query.fairshare)
		args.push_back("--fairshare");
	if (!query.jobs.empty()) {
		std::string ids;
		for (std::uint64_t id : query.jobs)
			ids += (ids.empty() ? "" : ",") + std::to_string(id);
		args.insert(args.end(), {"--jobs", ids});
	}
	return args;
}

} // namespace

std::string run_facts_program(const std::string &path, const std::vector<std::string> &options, unsigned deadline_s,
			      std::stop_token stop)
{
	int fds[2];
	if (::pipe2(fds, O_CLOEXEC) != 0)
		throw std::runtime_error("cannot make a pipe for " + path);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	std::vector<std::string> args{path};
	args.insert(args.end(), options.begin(), options.end());
	std::vector<char *> argv;
	for (auto &a : args)
		argv.push_back(a.data());
	argv.push_back(nullptr);
	pid_t pid = 0;
	int err = ::posix_spawn(&pid, path.c_str(), &fa, nullptr, argv.data(), environ);
	posix_spawn_file_actions_destroy(&fa);
	::close(fds[1]);
	if (err) {
		::close(fds[0]);
		throw std::runtime_error("cannot run " + path + ": " + std::strerror(err));
	}
	auto until = std::chrono::steady_clock::now() + std::chrono::seconds(deadline_s);
	std::string out;
	bool late = false;
	for (;;) {
		if (stop.stop_requested() || std::chrono::steady_clock::now() >= until) {
			late = true;
			break;
		}
		pollfd p{fds[0], POLLIN, 0};
		if (::poll(&p, 1, 100) <= 0)
			continue;	// a slice passed (or a signal): check the deadline
		char buf[4096];
		ssize_t n = ::read(fds[0], buf, sizeof buf);
		if (n <= 0)
			break;	// closed: the program is done
		out.append(buf, static_cast<std::size_t>(n));
	}
	::close(fds[0]);
	if (late)
		::kill(pid, SIGKILL);
	int status = 0;
	while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
	}
	if (late)
		throw std::runtime_error(path + " gave no answer within " + std::to_string(deadline_s) + " s");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		throw std::runtime_error(path + " failed: " + last_line(out));
	return out;
}

SlurmFacts::Reader slurm_facts_program(std::string path, unsigned deadline_s)
{
	return [path = std::move(path), deadline_s](const FactsQuery &query, std::stop_token stop) {
		return run_facts_program(path, args_of(query), deadline_s, stop);
	};
}

std::string slurm_facts_program_path()
{
	char exe[PATH_MAX];
	ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
	std::string self = n > 0 ? std::string(exe, static_cast<std::size_t>(n)) : std::string();
	std::string dir = self.substr(0, self.rfind('/'));
	return dir.substr(0, dir.rfind('/')) + "/libexec/gpuoversub/gpuoversub-slurm-facts";
}

} // namespace gos::gpud
