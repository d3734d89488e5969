#include "daemon/ctl/job_wide.hpp"

#include <cstdio>
#include <ctime>
#include <sstream>

#include "common/report/admin_comment.hpp"
#include "common/report/jobwide_record.hpp"
#include "common/util/text.hpp"
#include "common/util/units.hpp"
#include "daemon/gpud/slurm_facts.hpp"

namespace gos::ctl {
namespace {

// The version this release reads of a run's record.
constexpr int record_version = 3;

// What a Slurm client prints; empty if it is missing or fails. The job id
// is a number, and the facts program's path is quoted (an install path has
// no single quote).
std::string client_output(const std::string &command)
{
	std::string out;
	FILE *p = popen((command + " 2>/dev/null").c_str(), "r");
	if (!p)
		return out;
	char buf[4096];
	for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0 && out.size() < (1u << 20);)
		out.append(buf, n);
	return pclose(p) == 0 ? out : "";
}

bool is_v2(const nlohmann::json &ours)
{
	auto gos = ours.find("gos");
	return gos == ours.end() || !gos->is_number_integer() || gos->get<std::int64_t>() < record_version;
}

// The version 2 segment's lines; throws nlohmann::json::exception on a
// field of the wrong type.
std::string segment_text(const JobWide &v)
{
	const auto &o = v.ours;
	std::ostringstream s;
	std::string nodes, missing;
	for (const auto &n : o.value("nodes", nlohmann::json::array()))
		nodes += (nodes.empty() ? "" : ",") + escaped(n.get<std::string>());
	for (const auto &n : o.value("missing", nlohmann::json::array()))
		missing += (missing.empty() ? "" : ",") + escaped(n.get<std::string>());
	s << "job-wide (AdminComment, from " << v.source << "): nodes " << nodes << ", " << o.value("runs", 1u)
	  << " run(s); no part from: " << (missing.empty() ? "none" : missing) << "\n";
	s << "  peak on GPUs " << format_bytes(o.value("peak_dev", std::uint64_t{0})) << ", peak in host RAM "
	  << format_bytes(o.value("peak_host", std::uint64_t{0})) << ", evicted "
	  << format_bytes(o.value("evicted", std::uint64_t{0})) << ", returned "
	  << format_bytes(o.value("returned", std::uint64_t{0})) << "\n";
	for (const auto &p : o.value("parts", nlohmann::json::array())) {
		std::string gpus;
		for (const auto &g : p.value("gpus", nlohmann::json::array()))
			gpus += (gpus.empty() ? "" : ",") + escaped(g.get<std::string>());
		s << "  run " << p.value("run", 0u) << " node " << escaped(p.value("node", "?")) << " (GPUs " << gpus << "): peak "
		  << format_bytes(p.value("peak_dev", std::uint64_t{0})) << ", evicted "
		  << format_bytes(p.value("evicted", std::uint64_t{0}));
		if (std::string end = p.value("end", std::string()); !end.empty())
			s << ", ended: " << escaped(end);
		s << "\n";
	}
	return s.str();
}

std::string fixed(double x)
{
	char buf[64];
	std::snprintf(buf, sizeof buf, "%.1f", x);
	return buf;
}

std::string utc(std::int64_t t)
{
	std::time_t tt = static_cast<std::time_t>(t);
	std::tm tm{};
	char buf[32];
	if (!gmtime_r(&tt, &tm) || !std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm))
		return std::to_string(t);
	return buf;
}

template <class T, class Show>
std::string spread(const report::Spread<T> &s, Show show)
{
	return show(s.min) + "/" + show(s.median) + "/" + show(s.max);
}

// A run's record of version 3, a few lines.
std::string record_text(const report::JobwideRecord &r)
{
	std::ostringstream s;
	auto seconds = [](double x) { return fixed(x) + " s"; };
	auto micros = [](double x) { return fixed(x) + " us"; };
	s << "job-wide (AdminComment, from sacct): run " << r.run << ", started " << utc(r.start) << ", written by "
	  << escaped(r.writer) << ": parts from " << r.parts << " of " << r.n << " nodes, " << r.gpus << " GPUs, "
	  << r.late << " late\n";
	s << "  total: peak on GPUs " << format_bytes(r.sum_peak_dev) << ", peak in host RAM "
	  << format_bytes(r.sum_peak_host) << ", evicted " << format_bytes(r.sum_evicted) << ", returned "
	  << format_bytes(r.sum_returned) << "; longest oversubscribed " << seconds(r.max_oversub_s)
	  << ", worst p99 allocation " << micros(r.max_p99_us) << "\n";
	s << "  per node, min/median/max: peak on GPUs " << spread(r.node_peak_dev, format_bytes) << ", evicted "
	  << spread(r.node_evicted, format_bytes) << ", returned " << spread(r.node_returned, format_bytes)
	  << ";\n    oversubscribed " << spread(r.node_oversub_s, fixed) << " s, p99 allocation "
	  << spread(r.node_p99_us, fixed) << " us\n";
	s << "  top evicters: ";
	if (!r.top)
		s << "left out to fit";
	else if (r.top->empty())
		s << "none";
	for (std::size_t i = 0; r.top && i < r.top->size(); i++) {
		const report::Evicter &e = (*r.top)[i];
		s << (i ? ", " : "") << escaped(e.node) << " " << format_bytes(e.evicted) << " (peak "
		  << format_bytes(e.peak_dev) << ")";
	}
	s << "\n  ended: ";
	bool first = true;
	for (const auto &[reason, count] : r.ended) {
		s << (first ? "" : ", ") << escaped(reason) << " " << count;
		first = false;
	}
	s << (first ? "none" : "") << "\n  no part from: " << (r.missing.empty() ? "none" : escaped(r.missing));
	if (r.missing_more)
		s << " and " << r.missing_more << " more";
	s << "\n  job-wide file: " << (r.file.empty() ? "none" : escaped(r.file)) << " (on " << escaped(r.writer)
	  << ")\n";
	if (!r.unread.empty()) {
		s << "  fields not read (of the wrong type), shown as 0 or empty:";
		for (const std::string &f : r.unread)
			s << " " << escaped(f);
		s << "\n";
	}
	return s.str();
}

std::string run_text(const RunRecord &run)
{
	const std::string head = "job-wide (AdminComment, from sacct): ";
	if (!run.newer.empty())
		return head + "a run's record written by a newer release (gpuoversub=z:), which this one does not read\n";
	if (run.unparsed)
		return head + "a run's gpuoversub= segment that does not parse, not a record this version reads\n";
	const auto &gos = run.ours.at("gos");
	if (gos.get<std::int64_t>() > record_version)
		return head + "a run's record of version " + std::to_string(gos.get<std::int64_t>()) +
		       ", written by a newer release; this one reads version " + std::to_string(record_version) + "\n";
	return record_text(run.ours.get<report::JobwideRecord>());
}

} // namespace

JobWide job_wide_from(const std::string &sacct_lines, const std::string &slurmctld_field)
{
	JobWide v;
	std::istringstream lines(sacct_lines);
	for (std::string line; std::getline(lines, line);) {
		report::AdminComment c = report::split_admin_comment(line);
		if (!c.newer.empty())
			v.runs.push_back({{}, c.newer});
		if (c.ours.empty()) {
			if (c.newer.empty() && c.site.find("gpuoversub=") != std::string::npos)
				v.runs.push_back({{}, {}, true});
		} else if (is_v2(c.ours))
			v.ours = c.ours, v.source = "sacct";	// each run's holds the earlier runs' parts: the last is whole
		else
			v.runs.push_back({c.ours});
	}
	if (v.ours.empty() && v.runs.empty())
		if (auto ours = report::split_admin_comment(slurmctld_field).ours; !ours.empty() && is_v2(ours))
			v.ours = ours, v.source = "slurmctld";
	return v;
}

std::string own_runs(const std::string &sacct_lines, std::uint64_t job)
{
	const std::string id = std::to_string(job) + "|";
	std::istringstream lines(sacct_lines);
	std::string out;
	for (std::string line; std::getline(lines, line);)
		if (line.starts_with(id))
			out += line.substr(id.size()) + "\n";
	return out;
}

// Each source gives the AdminComment field alone, never a line of the
// job's fields: a job name or comment its owner wrote cannot pass for it.
JobWide job_wide_view(std::uint64_t job)
{
	std::string id = std::to_string(job);
	JobWide v = job_wide_from(own_runs(client_output("sacct -n -P -X -D -o JobIDRaw,AdminComment -j " + id), job), "");
	if (v.ours.empty() && v.runs.empty())
		v = job_wide_from("", client_output("'" + gpud::slurm_facts_program_path() + "' --admin-comment " + id));
	return v;
}

std::string job_wide_text(const JobWide &v)
{
	std::string text;
	if (!v.ours.empty()) {
		try {
			text = segment_text(v);
		} catch (const nlohmann::json::exception &e) {
			// Only root and Slurm write AdminComment; still, a field of the
			// wrong type is said, not fatal to the node's own report above.
			text = "job-wide (AdminComment, from " + v.source + "): not a record this version reads (" +
			       escaped(e.what()) + ")\n";
		}
	}
	for (const RunRecord &run : v.runs) {
		try {
			text += run_text(run);
		} catch (const nlohmann::json::exception &e) {
			text += "job-wide (AdminComment, from sacct): a run's record this version does not read (" +
				escaped(e.what()) + ")\n";
		}
	}
	return text;
}

nlohmann::json job_wide_runs_json(const JobWide &v)
{
	nlohmann::json runs = nlohmann::json::array();
	for (const RunRecord &run : v.runs)
		if (!run.newer.empty())
			runs.push_back({{"newer", run.newer}});
		else if (!run.unparsed)
			runs.push_back(run.ours);
	return runs;
}

} // namespace gos::ctl
