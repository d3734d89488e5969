#include "daemon/gpud/policy.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "common/util/log.hpp"

namespace gos::gpud {
namespace {

double lookup(const std::map<std::string, double> &table, const std::string &key, double fallback)
{
	auto it = table.find(key);
	return it == table.end() ? fallback : it->second;
}

config::Chosen<double> ceiling_for(const config::Config &cfg, const Job &job)
{
	return config::choose(cfg.policy.max_oversub, "max_oversub", job.partition, job.qos);
}

} // namespace

JobPolicy policy_for(const config::Config &cfg, const Job &job, const JobGpu &gpu, const SlurmPriorities &slurm)
{
	JobPolicy p;
	p.weight = weigh(cfg.policy, {gpu.node_gpu, job.partition, job.account, job.qos, gpu.shards, slurm, gpu.deflated});
	p.min_share = std::max({lookup(cfg.policy.min_share.partition, job.partition, 0),
				lookup(cfg.policy.min_share.account, job.account, 0), lookup(cfg.policy.min_share.qos, job.qos, 0)});
	p.ceiling = ceiling_for(cfg, job).value;
	if (job.factor_milli)
		p.factor = std::min(job.factor_milli / 1000.0, p.ceiling);
	return p;
}

// A limit is the factor times the job's nominal share: the balloon lowers
// an idle job's weight, which decides who is evicted first, but must not
// refuse its next allocation. No job, whatever it asked (a SIZE, or no
// limit at all), may hold more than the GPU's capacity times its ceiling
// (max_oversub): one allocation is bounded by what the node could back.
std::vector<TenantTerms> tenant_terms(const config::Config &cfg, const Jobs &jobs, const SlurmFacts &slurm,
				      std::uint32_t node_gpu, std::uint64_t capacity)
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
				auto facts = slurm.lookup(job.partition, job.qos, job.account, job.uid);
				on_gpu.push_back({&g, policy_for(cfg, job, g, facts), &job});
				nominal_sum += on_gpu.back().p.weight.nominal;
				heaviest = std::max(heaviest, on_gpu.back().p.weight.effective);
			}
	const auto cap = static_cast<double>(capacity);
	// Slurm's priorities can exceed the engine's range: scaled, ratios kept.
	double scale = heaviest > max_engine_weight ? max_engine_weight / heaviest : 1;
	std::vector<TenantTerms> terms;
	for (const auto &e : on_gpu) {
		std::uint64_t limit = e.job->size_limit;
		if (!limit && e.p.factor > 0)
			limit = static_cast<std::uint64_t>(e.p.factor * cap * e.p.weight.nominal / nominal_sum);
		auto most = std::max<std::uint64_t>(static_cast<std::uint64_t>(std::max(e.p.ceiling, 1.0) * cap), 1);
		limit = std::min<std::uint64_t>({limit ? limit : most, most, (1ULL << 48) - 1});
		if (e.g->held_at)	// on_unresponsive: refuse (unresponsive.hpp)
			limit = std::min(limit, e.g->held_at);
		terms.push_back({e.g->tenant, engine_weight(e.p.weight.effective * scale), limit,
				 static_cast<std::uint64_t>(e.p.min_share * cap)});
	}
	return terms;
}

std::vector<report::GpuWeight> weights_of(const config::Config &cfg, const Job &job, const SlurmPriorities &slurm)
{
	std::vector<report::GpuWeight> out;
	for (const auto &g : job.gpus)
		out.push_back(policy_for(cfg, job, g, slurm).weight);
	return out;
}

status::OversubChoice oversub_choice(const config::Config &cfg, const Job &job)
{
	using Kind = config::Request::Kind;
	config::Request asked{job.factor_milli ? Kind::factor : job.size_limit ? Kind::size : Kind::on,
			      job.factor_milli / 1000.0, job.size_limit};
	auto ceiling = ceiling_for(cfg, job);
	auto fallback = config::choose(cfg.policy.default_oversub, "default_oversub", job.partition, job.qos);
	return {asked.text(), ceiling.value, ceiling.entry, fallback.value.text(), fallback.entry};
}

std::uint32_t engine_weight(double weight)
{
	return static_cast<std::uint32_t>(std::clamp(std::lround(weight * 100), 1L, 65535L));
}

std::uint64_t PolicyApplier::capacity(std::uint32_t node_gpu) const
{
	std::uint64_t mem = gpus_.at(node_gpu).memory;
	return mem > cfg_.start.reserve ? mem - cfg_.start.reserve : 0;
}

void PolicyApplier::apply(std::uint32_t node_gpu, const Jobs &jobs)
{
	for (const TenantTerms &t : tenant_terms(cfg_, jobs, slurm_, node_gpu, capacity(node_gpu))) {
		engine_.tenant_policy(t.tenant, t.weight, t.limit, t.min_bytes);
		engine_.tenant_max_buffers(t.tenant, static_cast<std::uint32_t>(cfg_.policy.max_buffers_per_job));
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
