#include "common/report/admin_comment.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "common/util/json_text.hpp"

namespace gos::report {
namespace {

const std::string marker = "gpuoversub=";

// Where the JSON object that starts at `from` ends (one past its '}'), or
// npos: braces counted outside strings, escapes skipped.
std::size_t object_end(const std::string &s, std::size_t from)
{
	int depth = 0;
	bool in_string = false;
	for (std::size_t i = from; i < s.size(); i++) {
		char c = s[i];
		if (in_string) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_string = false;
		} else if (c == '"') {
			in_string = true;
		} else if (c == '{') {
			depth++;
		} else if (c == '}' && --depth == 0) {
			return i + 1;
		}
	}
	return std::string::npos;
}

std::string trimmed(const std::string &s)
{
	std::size_t b = s.find_first_not_of(" \t\n"), e = s.find_last_not_of(" \t\n");
	return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

bool is_old_compact_line(const std::string &field)
{
	auto j = nlohmann::json::parse(field, nullptr, false);
	return j.is_object() && j.value("gos", 0) == 1;
}

} // namespace

AdminComment split_admin_comment(const std::string &field)
{
	if (is_old_compact_line(trimmed(field)))
		return {};
	for (std::size_t at = field.find(marker); at != std::string::npos; at = field.find(marker, at + 1)) {
		std::size_t start = at + marker.size();
		if (start >= field.size() || field[start] != '{')
			continue;
		std::size_t end = object_end(field, start);
		if (end == std::string::npos)
			continue;
		auto ours = nlohmann::json::parse(field.substr(start, end - start), nullptr, false);
		if (!ours.is_object() || !ours.contains("parts"))
			continue;
		return {trimmed(trimmed(field.substr(0, at)) + " " + trimmed(field.substr(end))), std::move(ours)};
	}
	return {trimmed(field), nlohmann::json::object()};
}

std::string join_admin_comment(const AdminComment &c)
{
	std::string segment = c.ours.empty() ? "" : marker + json_text(c.ours);
	if (c.site.empty() || segment.empty())
		return c.site + segment;
	return c.site + " " + segment;
}

nlohmann::json node_part(const Report &r, const std::string &node, unsigned run)
{
	nlohmann::json gpus = nlohmann::json::array();
	for (const GpuPart &g : r.gpus)
		gpus.push_back(g.pci_bus_id);
	return {{"node", node},
		{"run", run},
		{"gpus", gpus},
		{"peak_dev", r.peak_device_bytes},
		{"peak_host", r.peak_host_bytes},
		{"evicted", r.bytes_evicted},
		{"returned", r.bytes_returned},
		{"oversub_s", r.oversubscribed_s},
		{"p99_us", r.alloc_latency_us.p99},
		{"end", r.end_reason}};
}

void merge_part(nlohmann::json &ours, const nlohmann::json &part, const std::vector<std::string> &job_nodes)
{
	if (!ours.is_object())	// no segment yet
		ours = nlohmann::json::object();
	nlohmann::json parts = nlohmann::json::array();
	for (const auto &p : ours.value("parts", nlohmann::json::array()))
		if (p.is_object() && !(p.value("node", "") == part.value("node", "") && p.value("run", 0u) == part.value("run", 0u)))
			parts.push_back(p);
	parts.push_back(part);
	std::sort(parts.begin(), parts.end(), [](const auto &a, const auto &b) {
		return std::pair(a.value("run", 0u), a.value("node", "")) < std::pair(b.value("run", 0u), b.value("node", ""));
	});
	// Bytes moved add up over every part; peaks add up over a run's nodes
	// (they held memory at once), and the job's peak is its largest run's.
	std::uint64_t evicted = 0, returned = 0;
	double oversub_s = 0, p99_us = 0;
	std::map<unsigned, std::pair<std::uint64_t, std::uint64_t>> run_peaks;
	std::set<std::string> reported;
	unsigned last_run = part["run"];
	for (const auto &p : parts)
		last_run = std::max(last_run, p.value("run", 0u));
	for (const auto &p : parts) {
		evicted += p.value("evicted", std::uint64_t{0});
		returned += p.value("returned", std::uint64_t{0});
		oversub_s = std::max(oversub_s, p.value("oversub_s", 0.0));
		p99_us = std::max(p99_us, p.value("p99_us", 0.0));
		auto &[dev, host] = run_peaks[p.value("run", 0u)];
		dev += p.value("peak_dev", std::uint64_t{0});
		host += p.value("peak_host", std::uint64_t{0});
		if (p.value("run", 0u) == last_run)
			reported.insert(p.value("node", ""));
	}
	std::uint64_t peak_dev = 0, peak_host = 0;
	for (const auto &[run, peaks] : run_peaks) {
		peak_dev = std::max(peak_dev, peaks.first);
		peak_host = std::max(peak_host, peaks.second);
	}
	// A job Slurm is requeueing (its node failed) has no nodes in its
	// record: the nodes of the run that wrote before are still the job's.
	std::vector<std::string> nodes = job_nodes;
	if (nodes.empty())
		for (const auto &n : ours.value("nodes", nlohmann::json::array()))
			nodes.push_back(n.get<std::string>());
	nlohmann::json missing = nlohmann::json::array();
	for (const auto &n : nodes)
		if (!reported.count(n))
			missing.push_back(n);
	ours = {{"gos", 2},
		{"runs", run_peaks.size()},
		{"nodes", nodes},
		{"missing", missing},
		{"peak_dev", peak_dev},
		{"peak_host", peak_host},
		{"evicted", evicted},
		{"returned", returned},
		{"oversub_s", oversub_s},
		{"p99_us", p99_us},
		{"parts", parts}};
}

bool holds_part(const nlohmann::json &ours, const nlohmann::json &part)
{
	if (!ours.is_object())
		return false;
	for (const auto &p : ours.value("parts", nlohmann::json::array()))
		if (p == part)
			return true;
	return false;
}

} // namespace gos::report
