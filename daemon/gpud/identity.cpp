#include "daemon/gpud/identity.hpp"

#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace gos::gpud {

std::optional<Peer> peer_of(int fd)
{
	ucred cred{};
	socklen_t len = sizeof cred;
	if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
		return std::nullopt;
	return Peer{cred.pid, cred.uid, cred.gid};
}

std::optional<ProcStat> proc_stat(pid_t pid, const char *proc_root)
{
	std::ifstream in(std::string(proc_root) + "/" + std::to_string(pid) + "/stat");
	std::string stat;
	if (!std::getline(in, stat))
		return std::nullopt;
	// "pid (comm) state ppid ... starttime": comm may hold spaces and
	// parentheses; starttime is the 20th field after it.
	auto close = stat.rfind(')');
	if (close == std::string::npos)
		return std::nullopt;
	std::istringstream rest(stat.substr(close + 1));
	std::string state, skip;
	ProcStat ps;
	long ppid = 0;
	if (!(rest >> state >> ppid))
		return std::nullopt;
	for (int field = 5; field < 22; field++)
		if (!(rest >> skip))
			return std::nullopt;
	if (!(rest >> ps.start))
		return std::nullopt;
	ps.ppid = static_cast<pid_t>(ppid);
	ps.exited = state == "Z" || state == "X";
	ps.stopped = state == "T" || state == "t";
	return ps;
}

std::optional<std::uint64_t> process_start(pid_t pid, const char *proc_root)
{
	auto ps = proc_stat(pid, proc_root);
	if (!ps || ps->exited)
		return std::nullopt;
	return ps->start;
}

bool own_pid_is(pid_t pid, pid_t seen, const char *proc_root)
{
	if (seen == pid)
		return true;
	std::ifstream in(std::string(proc_root) + "/" + std::to_string(pid) + "/status");
	std::string line;
	while (std::getline(in, line)) {
		if (line.rfind("NSpid:", 0) != 0)
			continue;
		std::istringstream numbers(line.substr(6));
		long last = 0, n = 0;
		while (numbers >> n)
			last = n;
		return last > 0 && last == seen;
	}
	return false;
}

pid_t pid_max(const char *proc_root)
{
	std::ifstream in(std::string(proc_root) + "/sys/kernel/pid_max");
	long max = 0;
	if (in >> max && max > 1 && max <= (1L << 22))
		return static_cast<pid_t>(max);
	return 1 << 22;	// the kernel's PID_MAX_LIMIT
}

std::string cgroup2_mount(const char *mounts)
{
	std::ifstream in(mounts);
	std::string line;
	while (std::getline(in, line)) {
		std::istringstream fields(line);
		std::string source, point, type;
		if (fields >> source >> point >> type && type == "cgroup2")
			return point;
	}
	return "/sys/fs/cgroup";
}

namespace {

// A directory's inode if root owns it (Slurm's do; a user's cannot be).
std::optional<std::uint64_t> roots_directory(const std::string &path)
{
	struct stat st{};
	if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0)
		return std::nullopt;
	return static_cast<std::uint64_t>(st.st_ino);
}

// A SLUID as Slurm 26.05 prints it (src/common/sluid.c): "s" and 13
// Crockford base32 digits of a 64-bit number, so the first at most 'F'.
bool is_sluid(std::string_view name)
{
	constexpr std::string_view digits = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
	if (name.size() != 14 || name[0] != 's' || digits.find(name[1]) > 15)
		return false;
	return name.find_first_not_of(digits, 1) == std::string_view::npos;
}

// How much of path is Slurm's root: root itself, or, where root ends in
// "slurmstepd.scope" (the default), "<NodeName>_slurmstepd.scope" beside
// it, as a Slurm built with --enable-multiple-slurmd (Debian's, Ubuntu's)
// always names its scope. nullopt where path is under neither.
std::optional<std::size_t> slurm_root_in(const std::string &path, const std::string &root)
{
	auto ends_there = [&](std::size_t n) { return path.size() == n || path[n] == '/'; };
	if (path.compare(0, root.size(), root) == 0 && ends_there(root.size()))
		return root.size();
	constexpr std::string_view scope = "slurmstepd.scope";
	const std::size_t parent = root.rfind('/') + 1;	// root is "" or starts with '/'
	if (std::string_view(root).substr(parent) != scope || path.compare(0, parent, root, 0, parent) != 0)
		return std::nullopt;
	const std::size_t end = std::min(path.find('/', parent), path.size());
	std::string_view name(path.data() + parent, end - parent);
	if (name.size() < scope.size() + 2 || !name.ends_with(scope) || name[name.size() - scope.size() - 1] != '_')
		return std::nullopt;
	return end;
}

// The job directory right after path's first `start` bytes, then the end
// or a '/': "job_<id>" names its job; a SLUID (Slurm 26.05's default,
// CgroupJobIdPaths=no) is a job too, but which one only its registered
// task tells (job 0 here).
std::optional<std::uint64_t> job_right_after(const std::string &path, std::size_t start, std::size_t &end)
{
	if (path.size() <= start + 1 || path[start] != '/')
		return std::nullopt;
	start++;
	end = std::min(path.find('/', start), path.size());
	std::string_view name(path.data() + start, end - start);
	if (is_sluid(name))
		return 0;
	if (name.size() < 5 || name.size() > 4 + 19 || name.substr(0, 4) != "job_" ||
	    name.find_first_not_of("0123456789", 4) != std::string_view::npos)
		return std::nullopt;
	auto job = std::stoull(std::string(name.substr(4)));
	return job ? std::optional(job) : std::nullopt;	// Slurm has no job 0
}

} // namespace

std::optional<JobCgroup> slurm_job_cgroup(pid_t pid, const SlurmCgroups &where, const char *proc_root)
{
	std::string root = where.root;
	while (!root.empty() && root.back() == '/')
		root.pop_back();	// "/" is the v2 root itself
	std::ifstream in(std::string(proc_root) + "/" + std::to_string(pid) + "/cgroup");
	std::string line;
	while (std::getline(in, line)) {
		if (line.rfind("0::", 0) != 0)
			continue;	// a v1 hierarchy: Slurm's jobs are checked on v2 only
		std::string path = line.substr(3);
		auto root_end = slurm_root_in(path, root);
		std::size_t end = 0;
		auto job = root_end ? job_right_after(path, *root_end, end) : std::nullopt;
		if (!job)
			return std::nullopt;
		auto id = roots_directory(where.mount + path.substr(0, end));
		if (!id || !roots_directory(where.mount + path.substr(0, *root_end)))
			return std::nullopt;
		return JobCgroup{*job, *id};
	}
	return std::nullopt;
}

std::optional<pid_t> registered_ancestor(pid_t pid, const std::function<bool(pid_t, std::uint64_t)> &known,
					 const char *proc_root)
{
	// Bounded: a parent chain is short, and a racing reparent cannot loop us.
	for (int depth = 0; depth < 64 && pid > 1; depth++) {
		auto ps = proc_stat(pid, proc_root);
		if (!ps)
			return std::nullopt;
		if (known(pid, ps->start))
			return pid;
		pid = ps->ppid;
	}
	return std::nullopt;
}

} // namespace gos::gpud
