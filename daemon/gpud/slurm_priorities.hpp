// Slurm's fairness facts about one job, as the weight is made from them.
// The combination rule's daemon/gpud/weight_rule.hpp (branch `rule`)
// defines the same struct; when it lands this header goes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gos::gpud {

struct SlurmPriorities {
	std::optional<std::uint32_t> partition_factor;	// PriorityJobFactor of the job's partition
	std::optional<std::uint32_t> qos_priority;	// Priority of the job's QOS
	std::optional<double> fairshare;		// association's fair-share factor, 0..1
	std::string reason;				// why a value is missing or stale; empty if none
};

} // namespace gos::gpud
