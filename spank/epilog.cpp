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
#include "spank/daemon_calls.hpp"
#include "spank/run_end.hpp"

namespace gos::spank {
namespace {

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

// This node's part of the run: its final report, or an empty one where the
// job asked for gpuoversub and ran no step here (so that the writer counts
// the node in, not missing).
void job_wide_part(const PlugstackArgs &args, const EpilogRun &run, const std::optional<report::Report> &report)
{
	try {
		const config::Config cfg = config::load_config(args.config);
		if (report)
			return send_part(args, cfg, run, *report);
		report::Report none;
		none.job = run.head.job_id;
		send_part(args, cfg, run, none);
	} catch (const std::exception &e) {
		slurm_error("[gpuoversub] job %lu: no job-wide part: %s", static_cast<unsigned long>(run.head.job_id), e.what());
	}
}

// The node's own report: its summary in slurmd's log, and on disk where
// the daemon could not write it.
void keep_report(const PlugstackArgs &args, std::uint64_t job, const proto::Reply &rep,
		 const std::optional<report::Report> &report)
{
	if (rep.status)
		return no_report(job, rep);
	const std::string id = std::to_string(job);
	if (!report) {
		slurm_error("[gpuoversub] job %s: the daemon's report is not one", id.c_str());
		return;
	}
	try {
		std::istringstream lines(report::report_summary(*report));
		for (std::string line; std::getline(lines, line);)
			slurm_info("[gpuoversub] %s", line.c_str());
		try {
			auto cfg = config::load_config(args.config);
			std::string path = cfg.policy.report_dir + "/job-" + id + ".json";
			struct stat st;
			if (stat(path.c_str(), &st) != 0) {	// the daemon writes it; this covers a report it could not
				make_dirs(cfg.policy.report_dir);
				write_file_atomically(path, report::stored_report_text(*report), 0640);
			}
		} catch (const std::exception &e) {
			slurm_debug("[gpuoversub] job %s: policy or report directory: %s", id.c_str(), e.what());
		}
	} catch (const std::exception &e) {
		slurm_error("[gpuoversub] job %s: report incomplete: %s", id.c_str(), e.what());
	}
}

} // namespace

void report_job_end(const PlugstackArgs &args, bool asked)
{
	const char *id = std::getenv("SLURM_JOB_ID");
	if (!id)
		return;
	gos_req_job req{std::strtoull(id, nullptr, 10)};
	std::optional<EpilogRun> run = comment_wanted(args) ? epilog_run(args, req.job_id) : std::nullopt;
	// Ends what its steps left (ENOENT: they all ended, or it was never ours).
	ask_daemon(args.socket, [&](proto::Client &c) { return c.job_end(req); });
	proto::Reply rep = ask_daemon(args.socket, [&](proto::Client &c) { return c.report(req); });
	std::optional<report::Report> report = rep.status ? std::nullopt : parsed_report(rep.body);
	// The node's own report before its job-wide part, whose seal may wait
	// on munged (seconds, or fail): the report never depends on it.
	keep_report(args, req.job_id, rep, report);
	if (run && (report || asked))
		job_wide_part(args, *run, report);
}

} // namespace gos::spank
