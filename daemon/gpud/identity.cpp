#include "daemon/gpud/identity.hpp"

#include <sys/socket.h>
#include <sys/stat.h>

#include <fstream>
#include <cctype>
#include <sstream>
#include <string>
#include <vector>

namespace gos::gpud {

std::optional<Peer> peer_of(int fd)
{
	ucred cred{};
	socklen_t len = sizeof cred;
	if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
		return std::nullopt;
	return Peer{cred.pid, cred.uid, cred.gid};
}

namespace {

// The fields of /proc/PID/stat after "pid (comm)": comm may hold spaces
// and parentheses. Empty if the process is gone.
std::vector<std::string> stat_fields(pid_t pid, const char *proc_root, std::size_t count)
{
	std::ifstream in(std::string(proc_root) + "/" + std::to_string(pid) + "/stat");
	std::string stat;
	if (!std::getline(in, stat))
		return {};
	auto close = stat.rfind(')');
	if (close == std::string::npos)
		return {};
	std::istringstream rest(stat.substr(close + 1));
	std::vector<std::string> fields;
	std::string field;
	while (fields.size() < count && rest >> field)
		fields.push_back(field);
	return fields.size() == count ? fields : std::vector<std::string>{};
}

std::optional<std::uint64_t> number(const std::string &text)
{
	try {
		return std::stoull(text);
	} catch (const std::exception &) {
		return std::nullopt;
	}
}

} // namespace

std::optional<pid_t> parent_of(pid_t pid, const char *proc_root)
{
	auto fields = stat_fields(pid, proc_root, 2);	// state ppid
	auto ppid = fields.empty() ? std::nullopt : number(fields[1]);
	return ppid ? std::optional<pid_t>(static_cast<pid_t>(*ppid)) : std::nullopt;
}

std::optional<std::uint64_t> process_start(pid_t pid, const char *proc_root)
{
	auto fields = stat_fields(pid, proc_root, 20);	// state ... starttime
	if (fields.empty() || fields[0] == "Z" || fields[0] == "X")
		return std::nullopt;
	return number(fields[19]);
}

namespace {

// The first "/job_<digits>" component of a cgroup path, as Slurm's cgroup
// plugins make: the job and the path up to and including it.
std::optional<std::pair<std::uint64_t, std::string>> job_component(const std::string &path)
{
	for (auto at = path.find("/job_"); at != std::string::npos; at = path.find("/job_", at + 1)) {
		std::size_t start = at + 5, end = start;
		while (end < path.size() && std::isdigit(static_cast<unsigned char>(path[end])))
			end++;
		if (end > start && end - start <= 19 && (end == path.size() || path[end] == '/'))
			return std::pair{std::stoull(path.substr(start, end - start)), path.substr(0, end)};
	}
	return std::nullopt;
}

} // namespace

std::optional<std::uint64_t> cgroup_job_of(pid_t pid, const char *proc_root)
{
	std::ifstream in(std::string(proc_root) + "/" + std::to_string(pid) + "/cgroup");
	std::string line;
	while (std::getline(in, line))
		if (auto found = job_component(line))
			return found->first;
	return std::nullopt;
}

std::optional<std::uint64_t> job_cgroup_id(pid_t pid, std::uint64_t job, const char *proc_root,
					   const char *cgroup_root)
{
	std::ifstream in(std::string(proc_root) + "/" + std::to_string(pid) + "/cgroup");
	std::string line;
	while (std::getline(in, line)) {
		if (line.rfind("0::", 0) != 0)
			continue;	// a v1 hierarchy: the kernel binds by v2 id only
		auto found = job_component(line.substr(3));
		struct stat st{};
		if (found && found->first == job && ::stat((cgroup_root + found->second).c_str(), &st) == 0 &&
		    S_ISDIR(st.st_mode))
			return static_cast<std::uint64_t>(st.st_ino);
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
