// Who is on the other end of a socket, and which job a process belongs to:
// only facts that root or Slurm set, never what the peer says about itself
// or what a user can arrange (a pid number, a cgroup a user may create).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace gos::gpud {

struct Peer {
	pid_t pid = 0;
	uid_t uid = 0;
	gid_t gid = 0;
};

std::optional<Peer> peer_of(int fd);

// Whether peer may read a job's data (its report, its stats): its owner and root.
inline bool may_read_job(const Peer &peer, uid_t owner)
{
	return peer.uid == 0 || peer.uid == owner;
}

// A process's parent and start time (field 22 of /proc/PID/stat, clock ticks
// after boot): a pid and its start time name one process, a recycled pid
// is another. nullopt if it is gone.
struct ProcStat {
	pid_t ppid = 0;
	std::uint64_t start = 0;
	bool exited = false;	// a zombie (or dead) awaiting its parent's wait
	bool stopped = false;	// stopped by a signal (a suspended job) or traced
};
std::optional<ProcStat> proc_stat(pid_t pid, const char *proc_root = "/proc");

// When a process started, if it runs: nullopt if it is gone or a zombie.
std::optional<std::uint64_t> process_start(pid_t pid, const char *proc_root = "/proc");

// Whether `seen` is pid's number in the process's own pid namespace (the
// last NSpid of /proc/PID/status): a task in a container (podman,
// Apptainer --pid) knows itself by that number, the daemon by pid.
bool own_pid_is(pid_t pid, pid_t seen, const char *proc_root = "/proc");

// kernel.pid_max: every pid the kernel hands out is below it.
pid_t pid_max(const char *proc_root = "/proc");

// Where Slurm's cgroup/v2 plugin makes its jobs' cgroups: the cgroup v2
// mount, and under it Slurm's own root, root + "/job_<id>", or from Slurm
// 26.05 on (CgroupJobIdPaths=no, its default) root + "/<SLUID>". A root
// ending in "slurmstepd.scope" stands for "<NodeName>_slurmstepd.scope"
// beside it too: a Slurm built for multiple slurmd (Debian's) names it so.
struct SlurmCgroups {
	std::string mount = "/sys/fs/cgroup";
	std::string root = "/system.slice/slurmstepd.scope";
};

// The cgroup v2 mount point from a mounts table, or /sys/fs/cgroup.
std::string cgroup2_mount(const char *mounts = "/proc/self/mounts");

// The Slurm job whose cgroup holds pid, and that cgroup's v2 id (its
// directory's inode, what the kernel binds): only the v2 line "0::", only
// a direct child "job_<id>" or "<SLUID>" of Slurm's root, only if both
// directories are root's. A "job_N" a user made in a delegated subtree is
// not a job.
struct JobCgroup {
	std::uint64_t job = 0;	// 0: a SLUID names no job id; the job whose task was registered in it is its job
	std::uint64_t id = 0;
};
std::optional<JobCgroup> slurm_job_cgroup(pid_t pid, const SlurmCgroups &where, const char *proc_root = "/proc");

// Walks from pid up through its ancestors and returns the first for which
// `known(pid, start)` says yes; a process belongs to a job if it or an
// ancestor is one of the job's registered tasks, the same process.
std::optional<pid_t> registered_ancestor(pid_t pid, const std::function<bool(pid_t, std::uint64_t start)> &known,
					 const char *proc_root = "/proc");

} // namespace gos::gpud
