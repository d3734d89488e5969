// The jobs on this node, as the SPANK plugin registered them, and the
// rules of their life: a step or task is admitted whole (in memory, in the
// engine and on disk) or not at all; a job ends once, its report written
// (final_reports.hpp) before its record goes (job_store.hpp).
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
#include "daemon/gpud/answer.hpp"
#include "daemon/gpud/engine_backend.hpp"
#include "daemon/gpud/final_reports.hpp"
#include "daemon/gpud/gpus.hpp"
#include "daemon/gpud/identity.hpp"
#include "daemon/gpud/job_counters.hpp"
#include "daemon/gpud/job_store.hpp"
#include "daemon/gpud/jobs.hpp"
#include "daemon/gpud/policy.hpp"
#include "daemon/gpud/tenants.hpp"

namespace gos::gpud {

class JobLedger {
public:
	// release is called once as a job ends, before its tenants go: the
	// job's processes are done, so their sessions let go of it.
	JobLedger(const config::Config &cfg, const std::vector<Gpu> &gpus, EngineControl &engine, PolicyApplier &policy,
		  std::function<void(std::uint64_t job)> release);

	// Loads the saved records at start: the jobs get their tenants back
	// (or new ones) and their processes are bound again.
	void resume();

	// The SPANK plugin's requests, each checked already as a request, and
	// each refused (answer.hpp's Refusal) or made whole. A step: the job made at its first step, the step's GPUs added, with
	// tenants, its processes bound to all of them, every GPU's policy set
	// again, and the record saved. What cannot be saved is undone whole.
	std::optional<Refusal> register_step(const gos_req_step &req);
	// A task of a registered step, the process pid is now; likewise undone
	// whole if its record cannot be saved.
	std::optional<Refusal> register_task(std::uint64_t job, std::uint32_t step, pid_t pid);
	// The step's tasks are forgotten; its job ends with its last step.
	std::optional<Refusal> end_step(std::uint64_t job, std::uint32_t step);
	// The epilog's end of the job, whatever steps did not say so; said
	// again for a job whose report is written, it is done already.
	std::optional<Refusal> end_job(std::uint64_t job);
	// Ends jobs that are gone, each with its reason, at once: none counts
	// in any share from now on; their reports are written by persist.
	void reap(const std::map<std::uint64_t, std::string> &gone);
	// Every checkpoint: retires what could not be retired, writes pending
	// reports (a few at a time), and saves changed records.
	void persist();

	Jobs &jobs() { return jobs_; }
	Job *find(std::uint64_t job);
	// The job of a session that said hello: it is here while the session
	// is (release lets the job's sessions go before the job goes), so not
	// finding it is a bug, not a refusal (std::out_of_range).
	Job &at(std::uint64_t job) { return jobs_.at(job); }
	// The registered job a process belongs to: a task of it (the same
	// process: a task found to have exited is forgotten), a descendant of
	// one, or in its Slurm cgroup.
	std::optional<std::uint64_t> job_of_pid(pid_t pid);
	// Where Slurm's cgroup plugin puts the jobs, as the policy says.
	SlurmCgroups slurm_cgroups() const { return {cgroup_mount_, cfg_.policy.slurm_cgroup}; }
	TenantBook &tenants() { return tenants_; }

	// What a report of the job says now: its counters, folded, and each
	// GPU's weight with its derivation, with Slurm's facts as last read.
	Job folded(const Job &job) { return gpud::folded(engine_, job); }
	std::vector<report::GpuWeight> weights(const Job &job) const
	{
		return weights_of(cfg_, job, policy_.priorities(job));
	}

private:
	Job *find_step(std::uint64_t job, std::uint32_t step);
	Job &create(const gos_req_step &req);
	void add_gpus(Job &job, const gos_req_step &req);
	std::optional<Refusal> admit_step(Job &job);
	void take_back_gpus(Job &job, std::size_t kept);
	void forget_tasks(Job &job, std::optional<std::uint32_t> step = std::nullopt);
	std::optional<Refusal> save(Job &job);
	std::set<std::uint32_t> retire(Job &job);
	void discard(std::uint64_t job);
	void end(std::uint64_t job);
	bool finish(Job &job);

	const config::Config &cfg_;
	const std::vector<Gpu> &gpus_;
	EngineControl &engine_;
	PolicyApplier &policy_;
	std::function<void(std::uint64_t)> release_;
	JobStore store_;
	FinalReports reports_;
	TenantBook tenants_;
	Jobs jobs_;
	std::string cgroup_mount_;	// the cgroup v2 mount, found at start
};

} // namespace gos::gpud
