// The jobs on this node, as the SPANK plugin registered them: their
// records, their tenants in the engine, their persistence in the state
// directory, and their end, which writes the report.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gpuoversub/abi.h>

#include "common/config/config.hpp"
#include "common/util/rate_limit.hpp"
#include "daemon/gpud/engine_backend.hpp"
#include "daemon/gpud/gpus.hpp"
#include "daemon/gpud/identity.hpp"
#include "daemon/gpud/jobs.hpp"
#include "daemon/gpud/policy.hpp"
#include "daemon/gpud/tenants.hpp"

namespace gos::gpud {

class JobLedger {
public:
	using Jobs = std::map<std::uint64_t, Job>;

	// release is called once as a job ends, before its tenants go: the
	// job's processes are done, so their sessions let go of it.
	JobLedger(const config::Config &cfg, const std::vector<Gpu> &gpus, EngineControl &engine, PolicyApplier &policy,
		  std::function<void(std::uint64_t job)> release);

	// Loads the saved records at start: the jobs get their tenants back
	// (or new ones) and their processes are bound again.
	void resume();

	Jobs &jobs() { return jobs_; }
	Job *find(std::uint64_t job);
	Job &at(std::uint64_t job) { return jobs_.at(job); }	// throws std::out_of_range
	Job *find_step(std::uint64_t job, std::uint32_t step);
	// The registered job a process belongs to: a task of it (the same
	// process: a task found to have exited is forgotten), a descendant of
	// one, or in its Slurm cgroup.
	std::optional<std::uint64_t> job_of_pid(pid_t pid);
	// Where Slurm's cgroup plugin puts the jobs, as the policy says.
	SlurmCgroups slurm_cgroups() const { return {cgroup_mount_, cfg_.policy.slurm_cgroup}; }
	// Forgets the job's tasks that exited, and all of step's if given,
	// and lets the engine forget them too.
	void forget_tasks(Job &job, std::optional<std::uint32_t> step = std::nullopt);
	// A new job's record, from its first step's registration.
	Job &create(const gos_req_step &req);
	// The counters of one rank (one process) of a job; null if the job is gone.
	RankStats *counters(std::uint64_t job, int rank, pid_t pid);
	TenantBook &tenants() { return tenants_; }

	// After a step registered: tenants for the job's GPUs, its processes
	// bound to all of them, every GPU's policy set again, the record saved.
	// Returns why the record could not be saved, or "".
	std::string admit(Job &job);
	// A task of the job, the process that started at task.start; an exited
	// task whose pid it may reuse is forgotten first.
	void add_task(Job &job, pid_t pid, const Task &task);
	// Drops a job whose first registration could not be saved: its
	// processes and tenants are let go, and no report is written.
	void discard(std::uint64_t job);
	// Ends the job (finish) and drops it once its report is written.
	void end(std::uint64_t job);
	// Whether the job ended here and its report is written.
	bool reported(std::uint64_t job) const;
	// Ends jobs that are gone, each with its reason, at once: none counts
	// in any share from now on; their reports are written by persist.
	void reap(const std::map<std::uint64_t, std::string> &gone);
	// Every checkpoint: retires what could not be retired, writes pending
	// reports (a few at a time), and saves changed records.
	void persist();

	std::vector<gos_tenant_stats> live_stats(const Job &job);
	// Each GPU's weight and its derivation, with Slurm's facts as last read.
	nlohmann::json weights(const Job &job) const { return weights_json(cfg_, job, policy_.priorities(job)); }
	Job folded(const Job &job);	// a copy with the live counters folded into the base
	// Writes the record if it changed, and the job's MPI ranks if they
	// did; returns why it could not, or "".
	std::string save(Job &job);

private:
	Job snapshot(const Job &job);	// a copy with the tenants' live counters
	std::set<std::uint32_t> retire(Job &job);
	bool finish(Job &job);

	const config::Config &cfg_;
	const std::vector<Gpu> &gpus_;
	EngineControl &engine_;
	PolicyApplier &policy_;
	std::function<void(std::uint64_t)> release_;
	JobStore store_;
	TenantBook tenants_;
	Jobs jobs_;
	std::string cgroup_mount_;			// the cgroup v2 mount, found at start
	std::map<std::uint64_t, std::string> saved_;	// last record written per job
	// Test only (GPUOVERSUBD_FAULT=kill-after-report): the daemon kills
	// itself with SIGKILL between a job's report and its record's removal.
	bool kill_after_report_ = false;
	std::map<std::uint64_t, RateLimit> report_failures_;	// per job whose report is pending
};

} // namespace gos::gpud
