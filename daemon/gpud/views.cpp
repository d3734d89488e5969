#include "daemon/gpud/views.hpp"

#include "daemon/gpud/job_counters.hpp"

namespace gos::gpud {
namespace {

// Every field of tenant_stats.def under its name.
nlohmann::json tenant_fields(const gos_tenant_stats &ts)
{
	nlohmann::json j;
#define GOS_TENANT_STAT(type, name, kind, help) j[#name] = ts.name;
#include <gpuoversub/tenant_stats.def>
	return j;
}

} // namespace

nlohmann::json Views::status()
{
	nlohmann::json gpus = nlohmann::json::array();
	for (const Gpu &g : discovery_.gpus) {
		gos_gpu_stats st{};
		engine_.gpu_stats(g.index, st);
		nlohmann::json tenants = nlohmann::json::array();
		for (const auto &[id, job] : ledger_.jobs())
			for (const auto &jg : job.gpus) {
				if (jg.node_gpu != g.index || !jg.tenant)
					continue;
				gos_tenant_stats ts{};
				engine_.tenant_stats(jg.tenant, ts);
				nlohmann::json t = tenant_fields(ts);
				t["job"] = id;
				t["weight"] = ts.weight / 100.0;	// relative, as the policy writes it
				t["throttled"] = ts.throttled != 0;
				t["idle"] = jg.deflated;
				t["oversubscribed_s"] = static_cast<double>(ts.oversub_ns) / 1e9;
				tenants.push_back(std::move(t));
			}
		gpus.push_back({{"gpu", g.index}, {"pci_bus_id", g.pci_bus_id}, {"numa_node", g.numa_node},
				{"memory", g.memory}, {"simulated", g.simulated}, {"capacity", st.capacity},
				{"used", st.used}, {"external", st.external}, {"evicting", st.evicting},
				{"waiting", st.waiting}, {"tenants", tenants}});
	}
	// Agents that said hello: in kernel mode they are no engine clients of the daemon.
	return {{"engine", engine_.name()}, {"gpu_source", discovery_.source}, {"jobs", ledger_.jobs().size()},
		{"agents", sessions_.agents()}, {"gpus", gpus}};
}

nlohmann::json Views::jobs()
{
	nlohmann::json out = nlohmann::json::array();
	for (const auto &[id, job] : ledger_.jobs()) {
		auto live = live_counters(engine_, job);
		std::uint64_t resident = 0, host = 0;
		nlohmann::json gpus = nlohmann::json::array();
		for (std::size_t i = 0; i < job.gpus.size(); i++) {
			resident += live[i].resident;
			host += live[i].host;
			gpus.push_back(job.gpus[i].node_gpu);
		}
		out.push_back({{"job", id}, {"uid", job.uid}, {"partition", job.partition}, {"account", job.account},
			       {"qos", job.qos}, {"steps", job.steps.size()}, {"tasks", job.tasks.size()}, {"gpus", gpus},
			       {"resident", resident}, {"host", host}, {"started", job.started},
			       {"report_pending", job.ended != 0}});
	}
	return out;
}

} // namespace gos::gpud
