#include "daemon/ctl/job_wide.hpp"

#include <cstdio>
#include <sstream>

#include "common/report/admin_comment.hpp"
#include "common/util/text.hpp"
#include "common/util/units.hpp"
#include "daemon/gpud/slurm_facts.hpp"

namespace gos::ctl {
namespace {

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

// The segment's lines; throws nlohmann::json::exception on a field of the
// wrong type.
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

} // namespace

// Each source gives the AdminComment field alone, never a line of the
// job's fields: a job name or comment its owner wrote cannot pass for it.
JobWide job_wide_view(std::uint64_t job)
{
	std::string id = std::to_string(job);
	for (auto [source, command] : {std::pair{"sacct", "sacct -n -P -X -o AdminComment -j " + id},
				       std::pair{"slurmctld", "'" + gpud::slurm_facts_program_path() + "' --admin-comment " + id}}) {
		auto ours = report::split_admin_comment(client_output(command)).ours;
		if (!ours.empty())
			return {ours, source};
	}
	return {};
}

std::string job_wide_text(const JobWide &v)
{
	if (v.ours.empty())
		return "";
	try {
		return segment_text(v);
	} catch (const nlohmann::json::exception &e) {
		// Only root and Slurm write AdminComment; still, a field of the
		// wrong type is said, not fatal to the node's own report above.
		return "job-wide (AdminComment, from " + v.source + "): not a record this version reads (" +
		       escaped(e.what()) + ")\n";
	}
}

} // namespace gos::ctl
