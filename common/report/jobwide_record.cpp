#include "common/report/jobwide_record.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>
#include <tuple>

#include "common/report/admin_comment.hpp"
#include "common/util/hostlist.hpp"

namespace gos::report {
namespace {

// TEXT of record_chars only, at most MAX bytes; a host name (for a
// hostlist) has no comma or space either, and is never empty.
std::string record_string(std::string_view text, std::size_t max, bool host = false)
{
	std::string s(text.substr(0, max));
	for (char &c : s)
		if (record_chars.find(c) == std::string_view::npos || (host && (c == ',' || c == ' ')))
			c = '_';
	return host && s.empty() ? "_" : s;
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b)
{
	return b > std::numeric_limits<std::uint64_t>::max() - a ? std::numeric_limits<std::uint64_t>::max() : a + b;
}

// Seconds and microseconds to the thousandth, and never NaN, infinite or
// negative (JSON has no form for the first two): the record is read by
// people, and 17 digits would only cost bytes.
double figure(double x)
{
	if (!std::isfinite(x) || x <= 0)
		return 0;
	// Past 1e15 a double has no thousandths to round, and x * 1000 could
	// overflow to infinity, which JSON writes as null (issue 50, finding 7).
	return x >= 1e15 ? x : std::round(x * 1000) / 1000;
}

template <class T>
Spread<T> spread(std::vector<T> values)
{
	if (values.empty())
		return {};
	std::sort(values.begin(), values.end());
	return {values.front(), values[(values.size() - 1) / 2], values.back()};
}

template <class T>
nlohmann::json spread_json(const Spread<T> &s)
{
	return nlohmann::json::array({s.min, s.median, s.max});
}

// A record's fields, read one by one: a field of the wrong type (a null, a
// string) reads as its default and is named in UNREAD, so that a reader
// shows what it can of a record it can partly read.
struct FieldReader {
	std::vector<std::string> &unread;

	template <class T>
	T operator()(const nlohmann::json &j, const std::string &key, const T &fallback, const std::string &within = "")
	{
		const auto it = j.find(key);
		if (it == j.end())
			return fallback;
		try {
			return it->template get<T>();
		} catch (const nlohmann::json::exception &) {
			unread.push_back(within + key);
			return fallback;
		}
	}

	template <class T>
	Spread<T> spread(const nlohmann::json &node, const std::string &key)
	{
		auto a = (*this)(node, key, std::vector<T>{}, "node.");
		if (a.size() == 3)
			return {a[0], a[1], a[2]};
		if (!a.empty())
			unread.push_back("node." + key);
		return {};
	}

	// The object KEY of J, or an empty one.
	nlohmann::json object(const nlohmann::json &j, const std::string &key)
	{
		const auto it = j.find(key);
		if (it == j.end())
			return nlohmann::json::object();
		if (!it->is_object()) {
			unread.push_back(key);
			return nlohmann::json::object();
		}
		return *it;
	}
};

// The end reasons, the most common first; past limit - 1 of them, the
// rest add up under "other".
std::map<std::string, std::uint64_t> ended_of(const std::vector<const NodePart *> &parts, const RecordLimits &limits)
{
	std::map<std::string, std::uint64_t> counts;
	for (const NodePart *p : parts)
		counts[p->end.empty() ? "completed" : record_string(p->end, limits.name_bytes)]++;
	if (counts.size() <= limits.reasons)
		return counts;
	std::vector<std::pair<std::string, std::uint64_t>> by_count(counts.begin(), counts.end());
	std::stable_sort(by_count.begin(), by_count.end(), [](const auto &a, const auto &b) { return a.second > b.second; });
	std::map<std::string, std::uint64_t> kept;
	std::size_t room = limits.reasons > 0 ? limits.reasons - 1 : 0;
	for (const auto &[reason, count] : by_count) {
		if (kept.size() < room && reason != "other")
			kept[reason] = count;
		else
			kept["other"] += count;
	}
	return kept;
}

std::vector<Evicter> top_of(const std::vector<const NodePart *> &parts, const RecordLimits &limits)
{
	std::vector<Evicter> top;
	for (const NodePart *p : parts)
		if (p->evicted > 0)
			top.push_back({record_string(p->node, limits.name_bytes, true), p->evicted, p->peak_dev});
	std::sort(top.begin(), top.end(), [](const Evicter &a, const Evicter &b) {
		return a.evicted != b.evicted ? a.evicted > b.evicted : a.node < b.node;
	});
	top.resize(std::min(top.size(), limits.top));
	return top;
}

} // namespace

void to_json(nlohmann::json &j, const JobwideRecord &r)
{
	j = {{"gos", r.gos},
	     {"run", r.run},
	     {"start", r.start},
	     {"writer", r.writer},
	     {"n", r.n},
	     {"parts", r.parts},
	     {"missing", r.missing},
	     {"missing_more", r.missing_more},
	     {"late", r.late},
	     {"gpus", r.gpus},
	     {"sum",
	      {{"peak_dev", r.sum_peak_dev},
	       {"peak_host", r.sum_peak_host},
	       {"evicted", r.sum_evicted},
	       {"returned", r.sum_returned}}},
	     {"max", {{"oversub_s", r.max_oversub_s}, {"p99_us", r.max_p99_us}}},
	     {"node",
	      {{"peak_dev", spread_json(r.node_peak_dev)},
	       {"evicted", spread_json(r.node_evicted)},
	       {"returned", spread_json(r.node_returned)},
	       {"oversub_s", spread_json(r.node_oversub_s)},
	       {"p99_us", spread_json(r.node_p99_us)}}},
	     {"ended", r.ended},
	     {"file", r.file}};
	if (r.top) {
		j["top"] = nlohmann::json::array();
		for (const Evicter &e : *r.top)
			j["top"].push_back({e.node, e.evicted, e.peak_dev});
	}
}

void from_json(const nlohmann::json &j, JobwideRecord &r)
{
	const JobwideRecord d;
	r.unread.clear();
	FieldReader read{r.unread};
	const auto sum = read.object(j, "sum"), max = read.object(j, "max"), node = read.object(j, "node");
	r.gos = j.at("gos").get<int>();
	r.run = read(j, "run", d.run);
	r.start = read(j, "start", d.start);
	r.writer = read(j, "writer", d.writer);
	r.n = read(j, "n", d.n);
	r.parts = read(j, "parts", d.parts);
	r.missing = read(j, "missing", d.missing);
	r.missing_more = read(j, "missing_more", d.missing_more);
	r.late = read(j, "late", d.late);
	r.gpus = read(j, "gpus", d.gpus);
	r.sum_peak_dev = read(sum, "peak_dev", d.sum_peak_dev, "sum.");
	r.sum_peak_host = read(sum, "peak_host", d.sum_peak_host, "sum.");
	r.sum_evicted = read(sum, "evicted", d.sum_evicted, "sum.");
	r.sum_returned = read(sum, "returned", d.sum_returned, "sum.");
	r.max_oversub_s = read(max, "oversub_s", d.max_oversub_s, "max.");
	r.max_p99_us = read(max, "p99_us", d.max_p99_us, "max.");
	r.node_peak_dev = read.spread<std::uint64_t>(node, "peak_dev");
	r.node_evicted = read.spread<std::uint64_t>(node, "evicted");
	r.node_returned = read.spread<std::uint64_t>(node, "returned");
	r.node_oversub_s = read.spread<double>(node, "oversub_s");
	r.node_p99_us = read.spread<double>(node, "p99_us");
	r.top.reset();
	if (j.contains("top")) {
		using Row = std::tuple<std::string, std::uint64_t, std::uint64_t>;
		auto rows = read(j, "top", std::vector<Row>{});
		r.top.emplace();
		for (const auto &[name, evicted, peak] : rows)
			r.top->push_back({name, evicted, peak});
	}
	r.ended = read(j, "ended", d.ended);
	r.file = read(j, "file", d.file);
}

JobwideRecord build_jobwide_record(const RunFacts &facts, const std::vector<NodePart> &parts,
				   const std::vector<std::string> &missing, const RecordLimits &limits)
{
	// The first part of each node counts, as the writer keeps it.
	std::vector<const NodePart *> kept;
	std::set<std::string> seen;
	for (const NodePart &p : parts)
		if (seen.insert(p.node).second)
			kept.push_back(&p);

	JobwideRecord r;
	r.run = facts.run;
	r.start = facts.start;
	r.writer = record_string(facts.writer, limits.name_bytes, true);
	r.n = facts.nodes;
	r.parts = kept.size();
	r.late = facts.late;
	std::vector<std::uint64_t> peak_dev, evicted, returned;
	std::vector<double> oversub_s, p99_us;
	for (const NodePart *p : kept) {
		r.gpus += p->gpus.size();
		r.sum_peak_dev = saturating_add(r.sum_peak_dev, p->peak_dev);
		r.sum_peak_host = saturating_add(r.sum_peak_host, p->peak_host);
		r.sum_evicted = saturating_add(r.sum_evicted, p->evicted);
		r.sum_returned = saturating_add(r.sum_returned, p->returned);
		peak_dev.push_back(p->peak_dev);
		evicted.push_back(p->evicted);
		returned.push_back(p->returned);
		oversub_s.push_back(figure(p->oversub_s));
		p99_us.push_back(figure(p->p99_us));
	}
	r.node_peak_dev = spread(peak_dev);
	r.node_evicted = spread(evicted);
	r.node_returned = spread(returned);
	r.node_oversub_s = spread(oversub_s);
	r.node_p99_us = spread(p99_us);
	r.max_oversub_s = r.node_oversub_s.max;
	r.max_p99_us = r.node_p99_us.max;
	r.top = top_of(kept, limits);
	r.ended = ended_of(kept, limits);
	r.file = "job-" + std::to_string(facts.job) + ".run-" + std::to_string(facts.run) + ".jobwide.json";

	std::vector<std::string> missing_names;
	for (const auto &m : missing)
		missing_names.push_back(record_string(m, limits.name_bytes, true));
	auto cut_missing = [&](std::size_t bytes) {
		CutHostlist cut = compress_hostlist_within(missing_names, bytes);
		r.missing = cut.text;
		r.missing_more = cut.left_out;
	};
	cut_missing(limits.missing_bytes);

	// Over the bound: top goes first, then missing is cut by what is over
	// (again, should the count left out grow by a digit).
	std::size_t size = jobwide_segment(r).size();
	if (size > limits.max_bytes && r.top) {
		r.top.reset();
		size = jobwide_segment(r).size();
	}
	while (size > limits.max_bytes && !r.missing.empty()) {
		cut_missing(r.missing.size() - std::min(r.missing.size(), size - limits.max_bytes));
		size = jobwide_segment(r).size();
	}
	if (size > limits.max_bytes)
		throw std::length_error("no job-wide record fits in " + std::to_string(limits.max_bytes) + " bytes");
	return r;
}

std::string jobwide_segment(const JobwideRecord &r)
{
	return join_admin_comment({"", r});
}

bool slurmdbd_safe(std::string_view text)
{
	return std::none_of(text.begin(), text.end(), [](char c) {
		return c == '\'' || c == '\\' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
	});
}

} // namespace gos::report
