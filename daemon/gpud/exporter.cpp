#include "daemon/gpud/exporter.hpp"

#include <cstdio>
#include <functional>
#include <sstream>

#include "common/util/atomic_file.hpp"
#include "common/util/log.hpp"
#include "daemon/gpud/job_counters.hpp"

namespace gos::gpud {
namespace {

// One job on one GPU, as every job metric needs it.
struct JobGpuRow {
	std::string labels;		// {job="…",gpu="…"}
	gos_tenant_stats live{};	// the tenant's now (zeros if none)
	CounterBase total;		// counters over the job's life, restarts included
};

// A metric family: its name (with the unit, and _total for a counter),
// type, help text and how a row gives its value.
template <class Row>
struct Family {
	const char *name, *type, *help;
	std::function<std::string(const Row &)> value;
};

std::string number(std::uint64_t v)
{
	return std::to_string(v);
}

// Nanoseconds as seconds, exactly.
std::string seconds(std::uint64_t ns)
{
	char frac[16];
	std::snprintf(frac, sizeof frac, ".%09llu", static_cast<unsigned long long>(ns % 1'000'000'000));
	return std::to_string(ns / 1'000'000'000) + frac;
}

template <class Row>
void write_family(std::ostream &m, const Family<Row> &f, const std::vector<Row> &rows)
{
	m << "# HELP " << f.name << " " << f.help << "\n# TYPE " << f.name << " " << f.type << "\n";
	for (const Row &r : rows)
		m << f.name << r.labels << " " << f.value(r) << "\n";
}

struct GpuRow {
	std::string labels;		// {gpu="…"}
	gos_gpu_stats st{};
};

const Family<GpuRow> gpu_families[] = {
	{"gpuoversub_gpu_capacity_bytes", "gauge", "GPU memory the engine gives the jobs: the GPU's, less the "
	 "reserve and what processes outside gpuoversub use.", [](const GpuRow &r) { return number(r.st.capacity); }},
	{"gpuoversub_gpu_used_bytes", "gauge", "GPU memory the jobs hold on the GPU, moves under way included.",
	 [](const GpuRow &r) { return number(r.st.used); }},
	{"gpuoversub_gpu_external_bytes", "gauge", "GPU memory processes outside gpuoversub use (NVML).",
	 [](const GpuRow &r) { return number(r.st.external); }},
};

const Family<JobGpuRow> job_families[] = {
	{"gpuoversub_job_resident_bytes", "gauge", "The job's memory on the GPU.",
	 [](const JobGpuRow &r) { return number(r.live.resident); }},
	{"gpuoversub_job_host_bytes", "gauge", "The job's memory of this GPU evicted to host RAM.",
	 [](const JobGpuRow &r) { return number(r.live.host); }},
	{"gpuoversub_job_entitlement_bytes", "gauge", "The job's fair share of the GPU's memory now.",
	 [](const JobGpuRow &r) { return number(r.live.entitlement); }},
	{"gpuoversub_job_throttled", "gauge", "1 while the job is throttled for persistent oversubscription, else 0.",
	 [](const JobGpuRow &r) { return number(r.live.throttled != 0); }},
	{"gpuoversub_job_evicted_bytes_total", "counter", "Bytes of the job's memory evicted from the GPU to host RAM.",
	 [](const JobGpuRow &r) { return number(r.total.bytes_evicted); }},
	{"gpuoversub_job_returned_bytes_total", "counter", "Bytes of the job's memory returned from host RAM to the GPU.",
	 [](const JobGpuRow &r) { return number(r.total.bytes_returned); }},
	{"gpuoversub_job_oversubscribed_seconds_total", "counter", "Time the job had memory of this GPU evicted to "
	 "host RAM.", [](const JobGpuRow &r) { return seconds(r.total.oversub_ns); }},
};

// The node's own figures: one sample each, no labels.
struct NodeRow {
	std::string labels;
	std::uint64_t value;
};

} // namespace

// The job-wide channel's (docs/jobwide.md): what this node sent as a
// run's node, and what its door and its writing did as a run's writer.
void Exporter::write_jobwide(std::ostream &m) const
{
	const JobwideCounts &c = jobwide_;
	auto value = [](const NodeRow &r) { return number(r.value); };
	const Family<NodeRow> plain[] = {
		{"gpuoversub_jobwide_run_ends_total", "counter", "Run ends this node's epilog reported with its part (JOBWIDE_PART).", value},
		{"gpuoversub_jobwide_parts_delivered_total", "counter", "This node's parts its runs' writers took.", value},
		{"gpuoversub_jobwide_parts_given_up_total", "counter", "This node's parts no writer took within "
		 "jobwide.send_for, or that were refused.", value},
		{"gpuoversub_jobwide_parts_taken_total", "counter", "Other nodes' parts this node's door took as their "
		 "run's writer.", value},
		{"gpuoversub_jobwide_records_written_total", "counter", "Runs whose job-wide record this node wrote into "
		 "Slurm's accounting.", value},
		{"gpuoversub_jobwide_records_unwritten_total", "counter", "Runs whose record could not be written (the "
		 "job-wide file keeps every part).", value},
	};
	const std::uint64_t values[] = {c.run_ends, c.delivered, c.given_up, c.door.taken, c.runs_written, c.runs_unwritten};
	for (std::size_t i = 0; i < std::size(plain); i++)
		write_family<NodeRow>(m, plain[i], {{"", values[i]}});
	std::vector<NodeRow> refused;
	for (const auto &[reason, n] : c.door.refused)
		refused.push_back({"{reason=\"" + reason + "\"}", n});
	write_family<NodeRow>(m, {"gpuoversub_jobwide_refused_total", "counter", "Frames this node's door refused "
				  "(or answered busy, as busy_*), by reason.", value}, refused);
}

void Exporter::write()
{
	if (cfg_.policy.exporter_textfile.empty())
		return;
	std::vector<GpuRow> gpus;
	for (const Gpu &g : gpus_) {
		gpus.push_back({"{gpu=\"" + std::to_string(g.index) + "\"}", {}});
		engine_.gpu_stats(g.index, gpus.back().st);
	}
	std::vector<JobGpuRow> jobs;
	std::uint64_t host = 0;
	for (const auto &[id, job] : ledger_.jobs()) {
		auto live = live_counters(engine_, job);
		for (std::size_t i = 0; i < job.gpus.size(); i++) {
			JobGpuRow r{"{job=\"" + std::to_string(id) + "\",gpu=\"" + std::to_string(job.gpus[i].node_gpu) + "\"}",
				    live[i], job.gpus[i].base};
			r.total.add(CounterBase::of(live[i]));
			host += live[i].host;
			jobs.push_back(std::move(r));
		}
	}
	std::ostringstream m;
	for (const auto &f : gpu_families)
		write_family(m, f, gpus);
	for (const auto &f : job_families)
		write_family(m, f, jobs);
	auto node_value = [](const NodeRow &r) { return number(r.value); };
	write_family<NodeRow>(m, {"gpuoversub_node_host_bytes", "gauge", "Host RAM all jobs' evicted memory uses.",
				  node_value}, {{"", host}});
	write_family<NodeRow>(m, {"gpuoversub_node_host_spill_limit_bytes", "gauge", "The most host RAM evictions "
				  "may use on the node; 0 for no limit.", node_value}, {{"", enforces_spill_limit_ ? cfg_.policy.host_spill_limit : 0}});
	write_jobwide(m);
	try {
		write_file_atomically(cfg_.policy.exporter_textfile, m.str(), 0644);
	} catch (const std::exception &e) {
		GOS_LOG(log::warning, "exporter: " << e.what());
	}
}

} // namespace gos::gpud
