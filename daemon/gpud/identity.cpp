#include "gpud/identity.hpp"

#include <sys/socket.h>

#include <fstream>
#include <cctype>
#include <sstream>
#include <string>

namespace gos::gpud {

std::optional<Peer> peer_of(int fd)
{
	ucred cred{};
	socklen_t len = sizeof cred;
	if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
		return std::nullopt;
	return Peer{cred.pid, cred.uid, cred.gid};
}

std::optional<pid_t> parent_of(pid_t pid, const char *proc_root)
{
	std::ifstream in(std::string(proc_root) + "/" + std::to_string(pid) + "/stat");
	std::string stat;
	if (!std::getline(in, stat))
		return std::nullopt;
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
	auto close = stat.rfind(')');
	if (close == std::string::npos)
		return std::nullopt;
	std::istringstream rest(stat.substr(close + 1));
	char state;
	long ppid;
	if (!(rest >> state >> ppid))
		return std::nullopt;
	return static_cast<pid_t>(ppid);
}

std::optional<std::uint64_t> cgroup_job_of(pid_t pid, const char *proc_root)
{
	std::ifstream in(std::string(proc_root) + "/" + std::to_string(pid) + "/cgroup");
	std::string line;
	while (std::getline(in, line)) {
		// A path component "job_<digits>", as Slurm's cgroup plugins make.
		for (auto at = line.find("/job_"); at != std::string::npos; at = line.find("/job_", at + 1)) {
			std::size_t start = at + 5, end = start;
			while (end < line.size() && std::isdigit(static_cast<unsigned char>(line[end])))
				end++;
			if (end > start && end - start <= 19 && (end == line.size() || line[end] == '/'))
				return std::stoull(line.substr(start, end - start));
		}
	}
	return std::nullopt;
}

std::optional<pid_t> registered_ancestor(pid_t pid, const std::function<bool(pid_t)> &known, const char *proc_root)
{
	// Bounded: a parent chain is short, and a racing reparent cannot loop us.
	for (int depth = 0; depth < 64 && pid > 1; depth++) {
		if (known(pid))
			return pid;
		auto parent = parent_of(pid, proc_root);
		if (!parent)
			return std::nullopt;
		pid = *parent;
	}
	return std::nullopt;
}

} // namespace gos::gpud
