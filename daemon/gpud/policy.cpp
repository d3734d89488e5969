#include "daemon/gpud/policy.hpp"

#include <algorithm>
#include <set>

#include "common/util/log.hpp"

namespace gos::gpud {

std::uint64_t PolicyApplier::capacity(std::uint32_t node_gpu) const
{
	std::uint64_t mem = gpus_.at(node_gpu).memory;
	return mem > cfg_.start.reserve ? mem - cfg_.start.reserve : 0;
}

// A limit is the factor times the job's nominal share: the balloon lowers
// an idle job's weight, which decides who is evicted first, but must not
// refuse its next allocation. No job, whatever it asked (a SIZE, or no
// limit at all), may hold more than the GPU's capacity times its ceiling
// (max_oversub): one allocation is bounded by what the node could back.
void PolicyApplier::apply(std::uint32_t node_gpu, const Jobs &jobs)
{
	struct Entry {
		const JobGpu *g;
		JobPolicy p;
		const Job *job;
	};
	std::vector<Entry> on_gpu;
	double nominal_sum = 0, heaviest = 0;
	for (const auto &[id, job] : jobs)
		for (const auto &g : job.gpus)
			if (g.node_gpu == node_gpu && g.tenant) {
				on_gpu.push_back({&g, policy_for(cfg_, job, g, priorities(job)), &job});
				nominal_sum += on_gpu.back().p.weight.nominal;
				heaviest = std::max(heaviest, on_gpu.back().p.weight.effective);
			}
	std::uint64_t cap = capacity(node_gpu);
	// Slurm's priorities can exceed the engine's range: scaled, ratios kept.
	double scale = heaviest > max_engine_weight ? max_engine_weight / heaviest : 1;
	for (const auto &e : on_gpu) {
		std::uint64_t limit = e.job->size_limit;
		if (!limit && e.p.factor > 0)
			limit = static_cast<std::uint64_t>(e.p.factor * static_cast<double>(cap) * e.p.weight.nominal / nominal_sum);
		auto most = std::max<std::uint64_t>(static_cast<std::uint64_t>(std::max(e.p.ceiling, 1.0) * static_cast<double>(cap)), 1);
		limit = std::min<std::uint64_t>({limit ? limit : most, most, (1ULL << 48) - 1});
		if (e.g->held_at)	// on_unresponsive: refuse (unresponsive.hpp)
			limit = std::min(limit, e.g->held_at);
		engine_.tenant_policy(e.g->tenant, engine_weight(e.p.weight.effective * scale), limit, e.p.min_bytes(cap));
		engine_.tenant_max_buffers(e.g->tenant, static_cast<std::uint32_t>(cfg_.policy.max_buffers_per_job));
	}
}

void PolicyApplier::apply_all(const Jobs &jobs)
{
	for (const Gpu &g : gpus_)
		apply(g.index, jobs);
}

bool PolicyApplier::balloon_period(Jobs &jobs)
{
	if (!cfg_.policy.balloon)
		return false;
	std::set<std::uint32_t> changed;
	for (auto &[id, job] : jobs)
		for (auto &g : job.gpus) {
			// Jobs whose agents never report activity are not judged idle.
			if (!g.reports_activity || !g.tenant)
				continue;
			auto active = g.activity.observe(g.launches > 0);
			g.launches = 0;
			if (!active)
				continue;
			gos_tenant_stats st{};
			engine_.tenant_stats(g.tenant, st);
			if (!g.deflated && *active < cfg_.policy.balloon_low && st.resident > 0) {
				g.deflated = true;
				changed.insert(g.node_gpu);
				GOS_LOG(log::info, "balloon: job " << id << " idle on GPU " << g.node_gpu << "; weight lowered");
			} else if (g.deflated && *active > cfg_.policy.balloon_high) {
				g.deflated = false;
				changed.insert(g.node_gpu);
				GOS_LOG(log::info, "balloon: job " << id << " active again on GPU " << g.node_gpu);
			}
		}
	for (auto g : changed)
		apply(g, jobs);
	return !changed.empty();
}

} // namespace gos::gpud
