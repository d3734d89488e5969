#include "daemon/gpud/job_counters.hpp"

namespace gos::gpud {

std::vector<gos_tenant_stats> live_counters(EngineControl &engine, const Job &job)
{
	std::vector<gos_tenant_stats> out(job.gpus.size());
	for (std::size_t i = 0; i < job.gpus.size(); i++)
		if (job.gpus[i].tenant)
			engine.tenant_stats(job.gpus[i].tenant, out[i]);
	return out;
}

Job with_live_counters(EngineControl &engine, const Job &job)
{
	Job copy = job;
	auto live = live_counters(engine, job);
	for (std::size_t i = 0; i < copy.gpus.size(); i++)
		if (copy.gpus[i].tenant)
			copy.gpus[i].live = CounterBase::of(live[i]);
	return copy;
}

Job folded(EngineControl &engine, const Job &job)
{
	Job copy = with_live_counters(engine, job);
	for (auto &g : copy.gpus) {
		g.base.add(g.live);
		g.live = {};
	}
	return copy;
}

} // namespace gos::gpud
