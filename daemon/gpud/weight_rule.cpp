#include "daemon/gpud/weight_rule.hpp"

#include <algorithm>
#include <sstream>

namespace gos::gpud {
namespace {

std::string text(double v)
{
	std::ostringstream s;
	s << v;
	return s.str();
}

// A name shown in a sentence: an empty field is said, not left blank.
std::string shown(const std::string &name)
{
	return name.empty() ? "(none)" : name;
}

report::WeightFactor shards_step(bool counted, const ShardHolding &s)
{
	if (!counted)
		return {"shards", 1, "not counted (slurm_weights.shards: false)"};
	if (!s.reason.empty())
		return {"shards", 1, "unknown: " + s.reason};
	if (!s.total)
		return {"shards", 1, "the GPU has no shards configured; the job holds it whole"};
	if (!s.held || s.held > s.total)
		return {"shards", 1, "garbled: " + std::to_string(s.held) + " of " + std::to_string(s.total) + " shards"};
	return {"shards", static_cast<double>(s.held) / s.total,
		std::to_string(s.held) + " of " + std::to_string(s.total) + " shards" +
			(s.held == s.total ? " (the whole GPU)" : "")};
}

// A YAML entry for the job's name, else the Slurm fact when counted; `why`
// is the fact's own reason, for a missing or a stale value.
report::WeightFactor priority_step(const std::string &fact, const std::map<std::string, double> &yaml, const std::string &name,
			 const std::string &slurm_name, bool counted, std::optional<double> slurm_value,
			 const std::string &why)
{
	if (auto it = yaml.find(name); it != yaml.end())
		return {fact, it->second, "weights." + fact + "." + name + " in the policy file (wins over Slurm's " + slurm_name + ")"};
	if (!counted)
		return {fact, 1, shown(name) + ": no weights." + fact + " entry; Slurm's " + slurm_name + " not counted"};
	if (!slurm_value)
		return {fact, 1, shown(name) + ": Slurm's " + slurm_name + " unknown" + (why.empty() ? "" : ": " + why)};
	return {fact, *slurm_value,
		shown(name) + ": Slurm's " + slurm_name + " " + text(*slurm_value) + (why.empty() ? "" : " (" + why + ")")};
}

// Slurm's defaults include 0 (a QOS's Priority): a weight of 0 would starve.
std::optional<double> at_least_one(std::optional<std::uint32_t> v)
{
	if (!v)
		return std::nullopt;
	return *v ? static_cast<double>(*v) : 1.0;
}

} // namespace

report::GpuWeight weigh(const config::Policy &policy, const WeightInputs &in)
{
	report::GpuWeight w;
	w.gpu = in.gpu;
	if (policy.equal_weights) {
		w.derivation.push_back({"fairness", 1, "fairness: equal gives every job weight 1"});
	} else {
		const auto &on = policy.slurm_weights;
		const SlurmPriorities &slurm = in.priorities;
		std::optional<double> fairshare;
		std::string fairshare_why = slurm.fairshare_reason;
		if (double f = slurm.fairshare.value_or(0); slurm.fairshare && !(f >= 0 && f <= 1))
			fairshare_why = "garbled: " + text(f) + " is not within 0..1";
		else if (slurm.fairshare)
			fairshare = std::max(f, 0.01);	// the engine's least weight
		w.derivation = {shards_step(on.shards, in.shards),
			   priority_step("partition", policy.weights.partition, in.partition, "PriorityJobFactor",
					 on.partition_factor, at_least_one(slurm.partition_factor), slurm.partition_reason),
			   priority_step("qos", policy.weights.qos, in.qos, "QOS Priority", on.qos_priority,
					 at_least_one(slurm.qos_priority), slurm.qos_reason),
			   priority_step("account", policy.weights.account, in.account, "fair-share factor", on.fairshare,
					 fairshare, fairshare_why)};
	}
	for (const auto &s : w.derivation)
		w.nominal *= s.factor;
	w.effective = w.nominal;
	if (in.deflated) {
		w.derivation.push_back({"balloon", policy.balloon_idle_weight, "idle on this GPU: balloon.idle_weight"});
		w.effective *= policy.balloon_idle_weight;
	}
	return w;
}

} // namespace gos::gpud
