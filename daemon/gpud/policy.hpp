// The policy applied to the engine: each job's weight, limit and minimum on
// every GPU it uses, and the balloon, which lowers the weight of a job idle
// on a GPU until it is active again.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "common/config/config.hpp"
#include "daemon/gpud/engine_backend.hpp"
#include "daemon/gpud/gpus.hpp"
#include "daemon/gpud/jobs.hpp"
#include "daemon/gpud/slurm_facts.hpp"

namespace gos::gpud {

class PolicyApplier {
public:
	using Jobs = std::map<std::uint64_t, Job>;

	// cfg is the daemon's, which a reload changes in place.
	PolicyApplier(const config::Config &cfg, const std::vector<Gpu> &gpus, EngineControl &engine,
		      const SlurmFacts &slurm)
		: cfg_(cfg), gpus_(gpus), engine_(engine), slurm_(slurm)
	{
	}

	// Every tenant on the GPU at once: a limit depends on everyone's weight.
	void apply(std::uint32_t node_gpu, const Jobs &jobs);
	void apply_all(const Jobs &jobs);
	// One balloon period: judges each job on each GPU by the launches its
	// agents reported. True if a weight changed (and was applied).
	bool balloon_period(Jobs &jobs);
	// What Slurm says of the job, as last read; never waits on Slurm.
	SlurmPriorities priorities(const Job &job) const
	{
		return slurm_.lookup(job.partition, job.qos, job.account, job.uid);
	}

private:
	std::uint64_t capacity(std::uint32_t node_gpu) const;

	const config::Config &cfg_;
	const std::vector<Gpu> &gpus_;
	EngineControl &engine_;
	const SlurmFacts &slurm_;
};

} // namespace gos::gpud
