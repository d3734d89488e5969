#include "spank/epilog.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/spank.h>
}

#include <nlohmann/json.hpp>

#include "common/util/atomic_file.hpp"
#include "common/config/config.hpp"
#include "common/report/report_text.hpp"
#include "spank/comment_update.hpp"
#include "spank/daemon_calls.hpp"

namespace gos::spank {
namespace {

// For the tests that force the nodes' updates to race: slurmd's environment
// (which slurmstepd inherits, and no job can set) may widen each node's
// read-to-write window, GOS_TEST_COMMENT_PAUSE_MS, up to 5 s.
unsigned test_comment_pause_ms()
{
	const char *v = std::getenv("GOS_TEST_COMMENT_PAUSE_MS");
	return v ? static_cast<unsigned>(std::min(std::strtoul(v, nullptr, 10), 5000ul)) : 0;
}

// The policy file's or the plugstack's word on AdminComment.
bool comment_wanted(const PlugstackArgs &args)
{
	if (args.report_admin_comment)
		return true;
	try {
		return config::load_config(args.config).policy.report_admin_comment;
	} catch (const std::exception &) {
		return false;
	}
}

// The daemon's reply to REPORT; nullopt if it is none.
std::optional<report::Report> parsed_report(const proto::Bytes &body)
{
	try {
		return nlohmann::json::parse(body).get<report::Report>();
	} catch (const nlohmann::json::exception &) {
		return std::nullopt;
	}
}

// Why a job has no report: not this node's or no daemon (debug), or an
// exchange that failed (a reply over the frame limit, say: an error, so
// that a missing AdminComment part is explained in slurmd's log).
void no_report(std::uint64_t job, const proto::Reply &rep)
{
	if (rep.status == -ENOENT || rep.status == -ENOTCONN)
		slurm_debug("[gpuoversub] job %lu: no eviction report: %s", static_cast<unsigned long>(job), rep.error.c_str());
	else
		slurm_error("[gpuoversub] job %lu: no eviction report: %s", static_cast<unsigned long>(job), rep.error.c_str());
}

} // namespace

void comment_when_over(const PlugstackArgs &args, std::uint64_t job, PartOf who, bool batch_step)
{
	if (!comment_wanted(args))
		return;
	gos_req_job req{job};
	proto::Reply rep = ask_daemon(args.socket, [&](proto::Client &c) { return c.report(req); });
	if (rep.status)
		return no_report(job, rep);
	auto report = parsed_report(rep.body);
	if (!report || report->ended.empty())
		return;	// other steps still run; the last one comments
	try {
		// Through the Slurm API of the slurmstepd that runs the hook (it
		// links libslurmfull): no scontrol, no PATH or SLURM_CONF to find.
		if (who.node.empty())
			who.node = report->node;
		CommentOutcome o = put_node_part(job, *report, who, test_comment_pause_ms());
		if (!o.ok)
			slurm_error("[gpuoversub] job %lu: AdminComment not set: %s", static_cast<unsigned long>(job),
				    o.error.c_str());
		else if (o.attempts > 1)
			slurm_info("[gpuoversub] job %lu: AdminComment set at attempt %d (other nodes wrote at once)",
				   static_cast<unsigned long>(job), o.attempts);
		if (o.ok && batch_step) {
			std::string names;
			for (const auto &n : wait_for_all_parts(job, std::chrono::seconds(30)))
				names += " " + n;
			if (!names.empty())
				slurm_error("[gpuoversub] job %lu: no part in AdminComment from node(s)%s after 30 s",
					    static_cast<unsigned long>(job), names.c_str());
		}
	} catch (const std::exception &e) {
		slurm_error("[gpuoversub] job %lu: report incomplete: %s", static_cast<unsigned long>(job), e.what());
	}
}

void report_job_end(const PlugstackArgs &args)
{
	const char *id = std::getenv("SLURM_JOB_ID");
	if (!id)
		return;
	gos_req_job req{std::strtoull(id, nullptr, 10)};
	// Ends what its steps left (ENOENT: they all ended, or it was never ours).
	ask_daemon(args.socket, [&](proto::Client &c) { return c.job_end(req); });
	proto::Reply rep = ask_daemon(args.socket, [&](proto::Client &c) { return c.report(req); });
	if (rep.status)
		return no_report(req.job_id, rep);
	auto report = parsed_report(rep.body);
	if (!report) {
		slurm_error("[gpuoversub] job %s: the daemon's report is not one", id);
		return;
	}
	try {
		std::istringstream lines(report::report_summary(*report));
		for (std::string line; std::getline(lines, line);)
			slurm_info("[gpuoversub] %s", line.c_str());
		try {
			auto cfg = config::load_config(args.config);
			std::string path = cfg.policy.report_dir + "/job-" + std::string(id) + ".json";
			struct stat st;
			if (stat(path.c_str(), &st) != 0) {	// the daemon writes it; this covers a report it could not
				make_dirs(cfg.policy.report_dir);
				write_file_atomically(path, report::stored_report_text(*report), 0640);
			}
		} catch (const std::exception &e) {
			slurm_debug("[gpuoversub] job %s: policy or report directory: %s", id, e.what());
		}
	} catch (const std::exception &e) {
		slurm_error("[gpuoversub] job %s: report incomplete: %s", id, e.what());
	}
}

} // namespace gos::spank
