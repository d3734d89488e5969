// Jobs that are gone without saying so: a JOB_END lost to a crash or never
// sent, a step registration the plugin gave up on. The reconciler asks the
// node what is left of each job, and Slurm (through the facts cache, never
// waiting on slurmctld) whether it still runs, and ends, with the reason in
// its report, every job of which nothing is left or that Slurm has ended,
// so that no stale job counts in anyone's share.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "common/config/config.hpp"
#include "daemon/gpud/identity.hpp"
#include "daemon/gpud/jobs.hpp"
#include "daemon/gpud/ledger.hpp"
#include "daemon/gpud/sessions.hpp"
#include "daemon/gpud/slurm_facts.hpp"

namespace gos::gpud {

// Slurm's job cgroups that hold a process: by the job their name says
// ("job_<id>"), and by id (a SLUID's, whose job is the one its registered
// task was seen in).
struct CgroupsInUse {
	std::set<std::uint64_t> jobs;
	std::set<std::uint64_t> ids;
	bool hold(const Job &job) const { return jobs.count(job.id) || (job.cgroup && ids.count(job.cgroup)); }
};

// What is left of the jobs on this node.
class NodeProbe {
public:
	virtual ~NodeProbe() = default;
	// Whether pid is still the process that started at `start` (0: unknown,
	// any live process with that pid).
	virtual bool task_alive(pid_t pid, std::uint64_t start) const = 0;
	// The Slurm job cgroups that still hold a process.
	virtual CgroupsInUse cgroups_with_processes(const SlurmCgroups &where) const = 0;
};

// The node itself, read from /proc.
class ProcProbe final : public NodeProbe {
public:
	explicit ProcProbe(const char *proc_root = "/proc") : proc_root_(proc_root) {}
	bool task_alive(pid_t pid, std::uint64_t start) const override;
	CgroupsInUse cgroups_with_processes(const SlurmCgroups &where) const override;

private:
	const char *proc_root_;
};

// Signs of life of one job.
struct JobSigns {
	bool task_alive = false;	// a registered task, the same process
	bool in_cgroup = false;		// a process in the job's cgroup
	bool connected = false;		// an agent of the job is connected
};

// Why the job is gone, or nullopt while it may still run. Nothing is gone
// within `grace_s` of its last registration: the plugin registers a step
// before its tasks.
std::optional<std::string> gone_because(const Job &job, const JobSigns &signs, std::int64_t now, std::int64_t grace_s);

// Why Slurm says the job is gone, or nullopt: it runs, it was not read
// yet, or slurmctld cannot be reached (nothing is ended on its word then).
// A job is gone once Slurm has said it ended, or no longer knew it, for
// `grace_s`, whatever is left of it on the node.
std::optional<std::string> gone_in_slurm(const Job &job, const SlurmJob &slurm, std::int64_t now, std::int64_t grace_s);

class Reconciler {
public:
	Reconciler(const config::Config &cfg, JobLedger &ledger, const SessionTable &sessions, const NodeProbe &probe,
		   SlurmFacts &slurm)
		: cfg_(cfg), ledger_(ledger), sessions_(sessions), probe_(probe), slurm_(slurm)
	{
	}

	// Ends every job that is gone (its report says why); returns how many.
	std::size_t sweep();
	// A job just registered: Slurm is asked about it now, for its state and
	// the names it is weighed by.
	void follow(std::uint64_t job) { slurm_.ask(job); }
	// Gives each running job the partition, account and QOS slurmctld
	// holds for it, once read.
	void take_slurm_names();

private:
	const config::Config &cfg_;
	JobLedger &ledger_;
	const SessionTable &sessions_;
	const NodeProbe &probe_;
	SlurmFacts &slurm_;
};

} // namespace gos::gpud
