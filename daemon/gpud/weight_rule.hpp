// The combination rule: a job's weight on one GPU from its Slurm allocation
// (shards), Slurm's priorities (as the facts cache last knew them), the
// policy file's weight maps and the balloon, with the derivation that
// `gpuoversubctl explain` and the job's report print.
//
// weight = shards held / shards of the GPU
//        × partition factor   (weights.partition[P] if the YAML has it, else PriorityJobFactor if counted)
//        × QOS factor         (weights.qos[Q]       if the YAML has it, else QOS Priority if counted)
//        × account factor     (weights.account[A]   if the YAML has it, else fair-share factor if counted)
//        × balloon_idle_weight while the balloon has deflated the job on this GPU
// A factor that is unknown, garbled or not counted is 1, with the reason.
// A YAML entry wins over the Slurm fact of its own kind only. `fairness:
// equal` makes every weight 1. Documented in gpuoversub.yaml(5).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/config/config.hpp"
#include "common/report/report.hpp"

namespace gos::gpud {

// What Slurm says about a job, as the facts cache last knew it. Each value is optional: unknown
// (slurmctld down and nothing cached, an unknown QOS) leaves it empty, with the reason. Each
// reason is its own fact's: why the value is missing, or stale; empty if neither.
struct SlurmPriorities {
	std::optional<std::uint32_t> partition_factor;	// PriorityJobFactor of the job's partition
	std::optional<std::uint32_t> qos_priority;	// Priority of the job's QOS
	std::optional<double> fairshare;		// association's fair-share factor, 0..1
	std::string partition_reason, qos_reason, fairshare_reason;
};

// The shards a job holds on one GPU, from its step registration. A job
// holding the whole GPU (--gres=gpu) holds all of them: held == total.
struct ShardHolding {
	std::uint32_t held = 0;
	std::uint32_t total = 0;	// shards of the GPU; 0 = unknown
	std::string reason;		// why unknown; empty if known
};

struct WeightInputs {
	std::uint32_t gpu = 0;		// node index, named in the result
	std::string partition, account, qos;
	ShardHolding shards;
	SlurmPriorities priorities;
	bool deflated = false;		// the balloon's, on this GPU
};

// The job's weight on the GPU, with its derivation: the report's own type,
// as explain and the job's report show it. Which Slurm facts count is the
// policy's (gpuoversub.yaml `slurm_weights`: shards on by default,
// partition_factor, qos_priority, fairshare off). Never throws; every
// unknown input yields factor 1 and says why.
report::GpuWeight weigh(const config::Policy &policy, const WeightInputs &in);

} // namespace gos::gpud
