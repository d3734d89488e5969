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

// What this node lost to its daemon's restarts under the job, per GPU.
std::vector<report::DaemonRestart> restart_list(const Job &job, const std::vector<Gpu> &gpus)
{
	std::vector<report::DaemonRestart> out;
	for (const Resumption &r : job.restarts) {
		report::DaemonRestart one{iso_time(r.at), {}};
		for (std::size_t i = 0; i < r.kept.size() && i < job.gpus.size(); i++) {
			std::uint32_t g = job.gpus[i].node_gpu;
			one.gpus.push_back({g, g < gpus.size() ? gpus[g].pci_bus_id : "", r.kept[i]});
		}
		out.push_back(std::move(one));
	}
	return out;
}

report::GpuPart gpu_part(const JobGpu &jg, const CounterBase &c, const std::vector<Gpu> &gpus)
{
	report::GpuPart p;
	p.gpu = jg.node_gpu;
	if (jg.node_gpu < gpus.size()) {
		p.pci_bus_id = gpus[jg.node_gpu].pci_bus_id;
		p.uuid = gpus[jg.node_gpu].uuid;
	}
#define GOS_TENANT_STAT(type, name, kind, help) GOS_REPORTED_##kind(GOS_COPY, name)
#define GOS_COPY(name) p.name = c.name;
#include <gpuoversub/tenant_stats.def>
#undef GOS_COPY
	return p;
}

} // namespace

report::Report build_report(const Job &job, const std::vector<gos_tenant_stats> &live, const std::vector<Gpu> &gpus)
{
	report::Report r;
	decltype(CounterBase::oversub_ns) oversub_ns = 0;	// the longest of any GPU
	for (std::size_t i = 0; i < job.gpus.size(); i++) {
		CounterBase c = job.gpus[i].base;
		if (i < live.size())
			c.add(CounterBase::of(live[i]));
		r.gpus.push_back(gpu_part(job.gpus[i], c, gpus));
		r.bytes_evicted += c.bytes_evicted;
		r.evictions += c.evictions;
		r.bytes_returned += c.bytes_returned;
		r.returns += c.returns;
		oversub_ns = std::max(oversub_ns, c.oversub_ns);
		r.throttle_events += c.throttle_events;
		r.peak_device_bytes += c.peak_resident;
		r.peak_host_bytes += c.peak_host;
	}
	r.job = job.id;
	r.node = node_name();
	r.uid = job.uid;
	r.partition = job.partition;
	r.account = job.account;
	r.qos = job.qos;
	r.oversub_factor = job.factor_milli / 1000.0;
	r.size_limit = job.size_limit;
	r.started = iso_time(job.started);
	r.ended = iso_time(job.ended);
	r.end_reason = job.end_reason;
	r.oversubscribed_s = static_cast<double>(oversub_ns) / 1e9;
	r.alloc_latency_us = {job.latency.percentile_us(0.5), job.latency.percentile_us(0.99), job.latency.count()};
	r.advice_events = job.advice_events;
	// The job's record keeps the report's own rank structs.
	r.ranks = job.ranks;
	for (const auto &[rank, m] : job.mpi_ranks)
		r.mpi_ranks.push_back(m);
	r.mpi_ranks_omitted = job.mpi_ranks_omitted;
	r.daemon_restarts = restart_list(job, gpus);
	r.daemon_restarts_omitted = job.restarts_omitted;
	return r;
}

std::string report_path(const std::string &dir, std::uint64_t job)
{
	return dir + "/job-" + std::to_string(job) + ".json";
}

void write_report(const std::string &dir, const report::Report &report, bool summary)
{
	make_dirs(dir);
	std::string json = report_path(dir, report.job);
	write_file_atomically(json, report::stored_report_text(report), 0640);
	if (summary)
		write_file_atomically(json.substr(0, json.size() - 5) + ".txt", report::report_summary(report), 0640);
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
