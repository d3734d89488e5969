#include "common/report/admin_comment.hpp"

#include <algorithm>
#include <cctype>
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

// The segment's version, 0 when it has none that is a number (value()
// would throw on a "gos" of another type).
std::int64_t version_of(const nlohmann::json &j)
{
	auto gos = j.is_object() ? j.find("gos") : j.end();
	return j.is_object() && gos != j.end() && gos->is_number_integer() ? gos->get<std::int64_t>() : 0;
}

bool is_old_compact_line(const std::string &field)
{
	return version_of(nlohmann::json::parse(field, nullptr, false)) == 1;
}

// Version 2 holds the nodes' parts; from 3 on, a run's record has none.
bool is_ours(const nlohmann::json &j)
{
	return j.is_object() && (j.contains("parts") || version_of(j) >= 3);
}

// A newer release's compressed record, "gpuoversub=z:" and base64: where
// it ends (one past its last character).
std::size_t newer_end(const std::string &s, std::size_t from)
{
	auto base64 = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/' || c == '='; };
	std::size_t i = from;
	while (i < s.size() && base64(s[i]))
		i++;
	return i;
}

// FIELD without [at, end), the text either side joined by one space.
std::string without(const std::string &field, std::size_t at, std::size_t end)
{
	return trimmed(trimmed(field.substr(0, at)) + " " + trimmed(field.substr(end)));
}

} // namespace

AdminComment split_admin_comment(const std::string &field)
{
	if (is_old_compact_line(trimmed(field)))
		return {};
	// A newer release's record first (the first only: a second stays the
	// site's), then ours in what is left.
	AdminComment c{field, nlohmann::json::object()};
	const std::string z = marker + "z:";
	if (std::size_t at = field.find(z); at != std::string::npos) {
		std::size_t end = newer_end(field, at + z.size());
		c.newer = field.substr(at, end - at);
		c.site = without(field, at, end);
	}
	for (std::size_t at = c.site.find(marker); at != std::string::npos; at = c.site.find(marker, at + 1)) {
		std::size_t start = at + marker.size();
		if (start >= c.site.size() || c.site[start] != '{')
			continue;
		std::size_t end = object_end(c.site, start);
		if (end == std::string::npos)
			continue;
		auto ours = nlohmann::json::parse(c.site.substr(start, end - start), nullptr, false);
		if (!is_ours(ours))
			continue;
		c.ours = std::move(ours);
		c.site = without(c.site, at, end);
		return c;
	}
	c.site = trimmed(c.site);
	return c;
}

std::string join_admin_comment(const AdminComment &c)
{
	std::string text = c.site;
	for (const std::string &segment : {c.newer, c.ours.empty() ? std::string() : marker + json_text(c.ours)})
		if (!segment.empty())
			text += (text.empty() ? "" : " ") + segment;
	return text;
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
