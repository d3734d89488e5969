// A job's policy on each GPU it uses, computed here and only here, from the
// policy file (common/config), Slurm's facts and what the job asked of
// --gpu-mem-oversub: its weight (the rule is weight_rule.hpp's), its
// ceiling (max_oversub), its limit and its minimum. PolicyApplier hands
// every tenant's terms to the engine, which holds allocations to them
// (kmod/engine/alloc.c); the balloon lowers the weight of a job idle on a
// GPU until it is active again.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "common/config/config.hpp"
#include "common/report/report.hpp"
#include "common/status/status.hpp"
#include "daemon/gpud/engine_backend.hpp"
#include "daemon/gpud/gpus.hpp"
#include "daemon/gpud/jobs.hpp"
#include "daemon/gpud/slurm_facts.hpp"

namespace gos::gpud {

// Weight, ceiling, factor and minimum share of a job on one GPU.
struct JobPolicy {
	report::GpuWeight weight;	// relative, with its derivation
	double factor = 0;		// --gpu-mem-oversub's FACTOR, clamped to the ceiling; 0 = none
	double ceiling = 0;		// max_oversub for the job's partition and QOS
	double min_share = 0;		// of the GPU's capacity
};
JobPolicy policy_for(const config::Config &cfg, const Job &job, const JobGpu &gpu, const SlurmPriorities &slurm);

// What the engine holds one tenant to.
struct TenantTerms {
	std::uint32_t tenant = 0;
	std::uint32_t weight = 0;	// the engine's units (engine_weight)
	std::uint64_t limit = 0;	// bytes; never 0: a job with no limit has its ceiling's
	std::uint64_t min_bytes = 0;
};
// Every tenant's terms on the GPU at once: a limit depends on everyone's weight.
std::vector<TenantTerms> tenant_terms(const config::Config &cfg, const Jobs &jobs, const SlurmFacts &slurm,
				      std::uint32_t node_gpu, std::uint64_t capacity);

// Every GPU's weight with its derivation, for the job's report and explain.
std::vector<report::GpuWeight> weights_of(const config::Config &cfg, const Job &job, const SlurmPriorities &slurm);
// What the job asks of --gpu-mem-oversub, and the policy entries that give
// its ceiling and the default of its partition and QOS, for explain.
status::OversubChoice oversub_choice(const config::Config &cfg, const Job &job);

// Engine weight: the relative weight in hundredths, within the engine's range.
inline constexpr double max_engine_weight = 655.35;
std::uint32_t engine_weight(double weight);

class PolicyApplier {
public:
	// cfg is the daemon's, which a reload changes in place.
	PolicyApplier(const config::Config &cfg, const std::vector<Gpu> &gpus, EngineControl &engine,
		      const SlurmFacts &slurm)
		: cfg_(cfg), gpus_(gpus), engine_(engine), slurm_(slurm)
	{
	}

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
