#include "daemon/gpud/exporter.hpp"

#include <sstream>

#include "common/util/atomic_file.hpp"
#include "common/util/log.hpp"

namespace gos::gpud {

void Exporter::write()
{
	if (cfg_.policy.exporter_textfile.empty())
		return;
	std::ostringstream m;
	m << "# HELP gpuoversub_gpu_capacity_bytes GPU memory the engine manages.\n"
	     "# TYPE gpuoversub_gpu_capacity_bytes gauge\n";
	for (const Gpu &g : gpus_) {
		gos_gpu_stats st{};
		engine_.gpu_stats(g.index, st);
		m << "gpuoversub_gpu_capacity_bytes{gpu=\"" << g.index << "\"} " << st.capacity << "\n"
		  << "gpuoversub_gpu_used_bytes{gpu=\"" << g.index << "\"} " << st.used << "\n"
		  << "gpuoversub_gpu_external_bytes{gpu=\"" << g.index << "\"} " << st.external << "\n";
	}
	m << "# HELP gpuoversub_job_resident_bytes Job memory on the GPU.\n# TYPE gpuoversub_job_resident_bytes gauge\n";
	for (const auto &[id, job] : ledger_.jobs()) {
		auto live = ledger_.live_stats(job);
		for (std::size_t i = 0; i < job.gpus.size(); i++) {
			std::string l = "{job=\"" + std::to_string(id) + "\",gpu=\"" + std::to_string(job.gpus[i].node_gpu) + "\"}";
			CounterBase c = job.gpus[i].base;
			c.add(CounterBase::of(live[i]));
			m << "gpuoversub_job_resident_bytes" << l << " " << live[i].resident << "\n"
			  << "gpuoversub_job_host_bytes" << l << " " << live[i].host << "\n"
			  << "gpuoversub_job_entitlement_bytes" << l << " " << live[i].entitlement << "\n"
			  << "gpuoversub_job_evicted_bytes_total" << l << " " << c.bytes_evicted << "\n"
			  << "gpuoversub_job_returned_bytes_total" << l << " " << c.bytes_returned << "\n"
			  << "gpuoversub_job_throttled" << l << " " << live[i].throttled << "\n";
		}
	}
	try {
		write_file_atomically(cfg_.policy.exporter_textfile, m.str(), 0644);
	} catch (const std::exception &e) {
		GOS_LOG(log::warning, "exporter: " << e.what());
	}
}

} // namespace gos::gpud
