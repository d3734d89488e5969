#include "daemon/gpud/report.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <cctype>
#include <cstdint>
#include <optional>
#include <string_view>
#include <sstream>

#include <unistd.h>

#include "common/util/atomic_file.hpp"
#include "common/util/held_dir.hpp"
#include "common/util/units.hpp"

namespace gos::gpud {
namespace {

std::string iso_time(std::int64_t t)
{
	if (!t)
		return "";
	char buf[32];
	std::time_t tt = static_cast<std::time_t>(t);
	std::tm tm{};
	gmtime_r(&tt, &tm);
	std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

// The node the report comes from, so that the reports of a job on several
// nodes can be told apart once collected: the short host name, which is
// Slurm's node name unless the site's NodeName differs from it.
std::string node_name()
{
	char host[256] = "";
	if (gethostname(host, sizeof host - 1) != 0)
		return "";
	std::string name = host;
	return name.substr(0, name.find('.'));
}

// What this node lost to its daemon's restarts under the job: per GPU,
// "kept" (the engine's tenant outlived the daemon) or "saved_record" (its
// counters restarted from the record saved before the restart).
nlohmann::json restart_list(const Job &job, const std::vector<Gpu> &gpus)
{
	nlohmann::json out = nlohmann::json::array();
	for (const DaemonRestart &r : job.restarts) {
		nlohmann::json per_gpu = nlohmann::json::array();
		for (std::size_t i = 0; i < r.kept.size() && i < job.gpus.size(); i++) {
			std::uint32_t g = job.gpus[i].node_gpu;
			per_gpu.push_back({{"gpu", g},
					   {"pci_bus_id", g < gpus.size() ? gpus[g].pci_bus_id : ""},
					   {"counters", r.kept[i] ? "kept" : "saved_record"}});
		}
		out.push_back({{"at", iso_time(r.at)}, {"gpus", per_gpu}});
	}
	return out;
}

} // namespace

nlohmann::json build_report(const Job &job, const std::vector<gos_tenant_stats> &live, const std::vector<Gpu> &gpus)
{
	nlohmann::json per_gpu = nlohmann::json::array();
	CounterBase total;
	std::uint64_t peak_device = 0, peak_host = 0;
	for (std::size_t i = 0; i < job.gpus.size(); i++) {
		CounterBase c = job.gpus[i].base;
		if (i < live.size())
			c.add(CounterBase::of(live[i]));
		const Gpu *g = job.gpus[i].node_gpu < gpus.size() ? &gpus[job.gpus[i].node_gpu] : nullptr;
		// Every counter and peak under its name in tenant_stats.def.
		nlohmann::json one = c;
		one["gpu"] = job.gpus[i].node_gpu;
		one["pci_bus_id"] = g ? g->pci_bus_id : "";
		per_gpu.push_back(std::move(one));
		total.bytes_evicted += c.bytes_evicted;
		total.evictions += c.evictions;
		total.bytes_returned += c.bytes_returned;
		total.returns += c.returns;
		total.oversub_ns = std::max(total.oversub_ns, c.oversub_ns);
		total.throttle_events += c.throttle_events;
		peak_device += c.peak_resident;
		peak_host += c.peak_host;
	}
	return {{"job", job.id},
		{"node", node_name()},
		{"uid", job.uid},
		{"partition", job.partition},
		{"account", job.account},
		{"qos", job.qos},
		{"oversub_factor", job.factor_milli / 1000.0},
		{"size_limit", job.size_limit},
		{"started", iso_time(job.started)},
		{"ended", iso_time(job.ended)},
		{"end_reason", job.end_reason},
		{"peak_device_bytes", peak_device},
		{"peak_host_bytes", peak_host},
		{"bytes_evicted", total.bytes_evicted},
		{"evictions", total.evictions},
		{"bytes_returned", total.bytes_returned},
		{"returns", total.returns},
		{"oversubscribed_s", static_cast<double>(total.oversub_ns) / 1e9},
		{"alloc_latency_us", {{"p50", job.latency.percentile_us(0.5)}, {"p99", job.latency.percentile_us(0.99)},
				      {"count", job.latency.count()}}},
		{"throttle_events", total.throttle_events},
		{"advice_events", job.advice_events},
		{"gpus", per_gpu},
		{"ranks", job.ranks},
		{"mpi_ranks", mpi_rank_list(job)},
		{"mpi_ranks_omitted", job.mpi_ranks_omitted},
		{"daemon_restarts", restart_list(job, gpus)},
		{"daemon_restarts_omitted", job.restarts_omitted}};
}

std::string report_path(const std::string &dir, std::uint64_t job)
{
	return dir + "/job-" + std::to_string(job) + ".json";
}

void write_report(const std::string &dir, const nlohmann::json &report, bool summary)
{
	make_dirs(dir);
	std::string json = report_path(dir, report["job"].get<std::uint64_t>());
	nlohmann::ordered_json text = {{"job", report["job"]}, {"uid", report["uid"]}};
	for (const auto &[key, value] : report.items())
		text[key] = value;	// job and uid stay first
	write_file_atomically(json, text.dump(2) + "\n", 0640);
	if (summary)
		write_file_atomically(json.substr(0, json.size() - 5) + ".txt", report_summary(report), 0640);
}

std::optional<uid_t> stored_report_owner(const std::string &path)
{
	int fd = open_in_held(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return std::nullopt;
	char head[96];
	ssize_t n = ::read(fd, head, sizeof head);
	::close(fd);
	if (n <= 0)
		return std::nullopt;
	// write_report's own start, {"job": N, "uid": U, ...; anything else is
	// not a report this daemon wrote for an owner.
	std::string_view rest(head, static_cast<std::size_t>(n));
	auto skip_space = [&] {
		while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.front())))
			rest.remove_prefix(1);
	};
	auto take = [&](std::string_view word) {
		skip_space();
		if (!rest.starts_with(word))
			return false;
		rest.remove_prefix(word.size());
		return true;
	};
	auto number = [&](std::size_t most) -> std::optional<std::uint64_t> {
		std::uint64_t v = 0;
		std::size_t digits = 0;
		for (; digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits])); digits++)
			v = v * 10 + static_cast<std::uint64_t>(rest[digits] - '0');
		if (digits == 0 || digits > most)
			return std::nullopt;
		rest.remove_prefix(digits);
		return v;
	};
	if (!take("{") || !take("\"job\": ") || !number(20) || !take(",") || !take("\"uid\": "))
		return std::nullopt;
	auto uid = number(10);
	if (!uid || *uid > UINT32_MAX || !take(","))
		return std::nullopt;
	return static_cast<uid_t>(*uid);
}

} // namespace gos::gpud
