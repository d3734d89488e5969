// Who is on the other end of a socket: the kernel's SO_PEERCRED, never
// what the peer says about itself.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>

namespace gos::gpud {

struct Peer {
	pid_t pid = 0;
	uid_t uid = 0;
	gid_t gid = 0;
};

std::optional<Peer> peer_of(int fd);

// Parent of a process from /proc, or nullopt if it is gone.
std::optional<pid_t> parent_of(pid_t pid, const char *proc_root = "/proc");

// When a process started, in clock ticks after boot (/proc/PID/stat field
// 22); nullopt if it is gone or a zombie.
std::optional<std::uint64_t> process_start(pid_t pid, const char *proc_root = "/proc");

// The Slurm job a process's cgroup path names ("/job_<id>/"), if any.
std::optional<std::uint64_t> cgroup_job_of(pid_t pid, const char *proc_root = "/proc");

// The cgroup v2 id (its directory's inode) of job's own cgroup, the
// ".../job_<id>" that holds every task of the job, if pid is in it.
std::optional<std::uint64_t> job_cgroup_id(pid_t pid, std::uint64_t job, const char *proc_root = "/proc",
					   const char *cgroup_root = "/sys/fs/cgroup");

// Walks from pid up through its ancestors and returns the first for which
// `known` says yes; a process belongs to a job if it or an ancestor was
// registered as one of the job's tasks.
std::optional<pid_t> registered_ancestor(pid_t pid, const std::function<bool(pid_t)> &known,
					 const char *proc_root = "/proc");

} // namespace gos::gpud
