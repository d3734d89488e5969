#include "common/report/report.hpp"

#include "common/util/json_text.hpp"

namespace gos::report {

void to_json(nlohmann::json &j, const GpuPart &g)
{
	j = {{"gpu", g.gpu}, {"pci_bus_id", g.pci_bus_id}};
	if (!g.uuid.empty())
		j["uuid"] = g.uuid;
#define GOS_TENANT_STAT(type, name, kind, help) GOS_REPORTED_##kind(GOS_PUT, name)
#define GOS_PUT(name) j[#name] = g.name;
#include <gpuoversub/tenant_stats.def>
#undef GOS_PUT
}

void from_json(const nlohmann::json &j, GpuPart &g)
{
	g.gpu = j.value("gpu", std::uint32_t{0});
	g.pci_bus_id = j.value("pci_bus_id", std::string());
	g.uuid = j.value("uuid", std::string());
#define GOS_TENANT_STAT(type, name, kind, help) GOS_REPORTED_##kind(GOS_GET, name)
#define GOS_GET(name) g.name = j.value(#name, decltype(g.name){0});
#include <gpuoversub/tenant_stats.def>
#undef GOS_GET
}

void to_json(nlohmann::json &j, const RestartGpu &g)
{
	j = {{"gpu", g.gpu}, {"pci_bus_id", g.pci_bus_id}, {"counters", g.kept ? "kept" : "saved_record"}};
}

void from_json(const nlohmann::json &j, RestartGpu &g)
{
	g.gpu = j.value("gpu", std::uint32_t{0});
	g.pci_bus_id = j.value("pci_bus_id", std::string());
	g.kept = j.value("counters", std::string()) == "kept";
}

// Every field but weights, which only some reports have.
#define GOS_REPORT_FIELDS(F)                                                                                        \
	F(job) F(node) F(uid) F(partition) F(account) F(qos) F(oversub_factor) F(size_limit) F(started) F(ended)   \
	F(end_reason) F(peak_device_bytes) F(peak_host_bytes) F(bytes_evicted) F(evictions) F(bytes_returned)      \
	F(returns) F(oversubscribed_s) F(alloc_latency_us) F(throttle_events) F(advice_events) F(gpus) F(ranks)   \
	F(mpi_ranks) F(mpi_ranks_omitted) F(daemon_restarts) F(daemon_restarts_omitted)

void to_json(nlohmann::json &j, const Report &r)
{
	j = nlohmann::json::object();
#define GOS_PUT(name) j[#name] = r.name;
	GOS_REPORT_FIELDS(GOS_PUT)
#undef GOS_PUT
	if (r.weights)
		j["weights"] = *r.weights;
}

void from_json(const nlohmann::json &j, Report &r)
{
	r = Report{};
#define GOS_GET(name) r.name = j.value(#name, r.name);
	GOS_REPORT_FIELDS(GOS_GET)
#undef GOS_GET
	r.job = j.at("job").get<std::uint64_t>();	// a report names its job
	if (j.contains("weights"))
		r.weights = j["weights"].get<std::vector<GpuWeight>>();
}

std::string stored_report_text(const Report &r)
{
	nlohmann::json all = r;
	nlohmann::ordered_json text = {{"job", r.job}, {"uid", r.uid}};
	for (const auto &[key, value] : all.items())
		text[key] = value;	// job and uid stay first
	return json_text(text, 2) + "\n";
}

} // namespace gos::report
