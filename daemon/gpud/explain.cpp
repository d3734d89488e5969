// gpuoversubctl explain: for each GPU of a job, the weight with the facts
// and rules that produced it, and the engine's entitlement with its reason.
#include <cstdio>

#include "common/util/units.hpp"
#include "daemon/gpud/views.hpp"

namespace gos::gpud {
namespace {

// Why the engine's water-filling gave the tenant what it gave.
std::pair<std::string, double> share_reason(const gos_tenant_stats &ts)
{
	double weight = ts.weight / 100.0;
	double level = weight > 0 ? static_cast<double>(ts.entitlement) / weight : 0;
	if (ts.entitlement >= ts.demand)
		return {"asks for no more than its weighted share: entitled to all it asks", level};
	if (ts.limit && ts.entitlement >= ts.limit)
		return {"held to its limit", level};
	if (ts.min_bytes && ts.entitlement <= ts.min_bytes)
		return {"at its minimum share", level};
	return {"its weight times the water-filling level of this GPU (" + format_bytes(static_cast<std::uint64_t>(level)) +
			" per unit of weight)",
		level};
}

} // namespace

status::Explanation Views::explain(const Job &job, std::vector<report::GpuWeight> weights,
				   status::OversubChoice oversub)
{
	status::Explanation e{job.id, job.uid, job.partition, job.account, job.qos, std::move(oversub), {}};
	for (std::size_t i = 0; i < job.gpus.size(); i++) {
		gos_tenant_stats ts{};
		if (job.gpus[i].tenant)
			engine_.tenant_stats(job.gpus[i].tenant, ts);
		auto [why, level] = share_reason(ts);
		e.gpus.push_back({std::move(weights.at(i)),
				  {ts.weight / 100.0, ts.min_bytes, ts.limit, ts.demand, ts.entitlement, why, level,
				   ts.resident, ts.host, ts.unmanaged}});
	}
	return e;
}

} // namespace gos::gpud
