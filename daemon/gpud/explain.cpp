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

nlohmann::json Views::explain(const Job &job, const nlohmann::json &weights, const nlohmann::json &oversub)
{
	nlohmann::json gpus = nlohmann::json::array();
	std::size_t i = 0;
	for (const auto &g : job.gpus) {
		gos_tenant_stats ts{};
		if (g.tenant)
			engine_.tenant_stats(g.tenant, ts);
		auto [why, level] = share_reason(ts);
		nlohmann::json w = weights.at(i++);
		w.update({{"weight", ts.weight / 100.0}, {"min_bytes", ts.min_bytes}, {"limit", ts.limit},
			  {"demand", ts.demand}, {"entitlement", ts.entitlement}, {"entitlement_why", why},
			  {"level", level}, {"resident", ts.resident}, {"host", ts.host}});
		gpus.push_back(std::move(w));
	}
	return {{"job", job.id}, {"uid", job.uid}, {"partition", job.partition}, {"account", job.account},
		{"qos", job.qos}, {"oversub", oversub}, {"gpus", gpus}};
}

} // namespace gos::gpud
