#include "daemon/gpud/views.hpp"

#include "daemon/gpud/job_counters.hpp"

namespace gos::gpud {

status::Status Views::status()
{
	// Agents that said hello: in kernel mode they are no engine clients of the daemon.
	status::Status out{engine_.name(), discovery_.source, ledger_.jobs().size(), sessions_.agents(), {}};
	for (const Gpu &g : discovery_.gpus) {
		gos_gpu_stats st{};
		engine_.gpu_stats(g.index, st);
		std::vector<std::string> mig_devices;
		for (const Gpu::MigDevice &d : g.mig_devices)
			mig_devices.push_back(d.uuid);
		status::GpuStatus gs{g.index,	   g.pci_bus_id, g.uuid,	g.parent_uuid, g.gpu_instance, mig_devices,
				     g.numa_node,  g.memory,	 g.simulated,	st.capacity,   st.used,	       st.external,
				     st.evicting, st.waiting,	 {}};
		for (const auto &[id, job] : ledger_.jobs())
			for (const auto &jg : job.gpus) {
				if (jg.node_gpu != g.index || !jg.tenant)
					continue;
				status::TenantStatus t;
				t.job = id;
				engine_.tenant_stats(jg.tenant, t.engine);
				t.idle = jg.deflated;
				t.oversubscribed_s = static_cast<double>(t.engine.oversub_ns) / 1e9;
				gs.tenants.push_back(t);
			}
		out.gpus.push_back(std::move(gs));
	}
	return out;
}

std::string Views::summary() const
{
	auto counted = [](std::size_t n, const char *what) {
		return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
	};
	return "serving " + counted(ledger_.jobs().size(), "job") + " and " + counted(sessions_.agents(), "agent") + " on " +
	       counted(discovery_.gpus.size(), "GPU");
}

std::vector<status::JobStatus> Views::jobs()
{
	std::vector<status::JobStatus> out;
	for (const auto &[id, job] : ledger_.jobs()) {
		auto live = live_counters(engine_, job);
		status::JobStatus j{id, job.uid, job.partition, job.account, job.qos, job.steps.size(), job.tasks.size(),
				    {}, 0, 0, job.started, job.ended != 0, job.cgroup};
		for (std::size_t i = 0; i < job.gpus.size(); i++) {
			j.resident += live[i].resident;
			j.host += live[i].host;
			j.gpus.push_back(job.gpus[i].node_gpu);
		}
		out.push_back(std::move(j));
	}
	return out;
}

} // namespace gos::gpud
