#include "spank/epilog.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

extern "C" {
#include <slurm/spank.h>
}

#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "config/config.hpp"
#include "gpud/report_text.hpp"
#include "spank/daemon_calls.hpp"

extern char **environ;

namespace gos::spank {
namespace {

// scontrol update JobId=N AdminComment=LINE, given 10 s.
void set_admin_comment(std::uint64_t job, const std::string &line)
{
	std::string id = "JobId=" + std::to_string(job), comment = "AdminComment=" + line;
	char *argv[] = {const_cast<char *>("scontrol"), const_cast<char *>("update"), id.data(), comment.data(),
			nullptr};
	pid_t pid;
	if (int err = posix_spawnp(&pid, "scontrol", nullptr, nullptr, argv, environ)) {
		slurm_error("[gpuoversub] job %lu: cannot run scontrol for AdminComment: %s",
			    static_cast<unsigned long>(job), std::strerror(err));
		return;
	}
	int status = 0;
	for (int i = 0; i < 100; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			if (!WIFEXITED(status) || WEXITSTATUS(status))
				slurm_error("[gpuoversub] job %lu: scontrol could not set AdminComment",
					    static_cast<unsigned long>(job));
			return;
		}
		std::this_thread::sleep_for(std::chrono::milliseconds(100));
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	slurm_error("[gpuoversub] job %lu: scontrol did not finish in 10 s; AdminComment not set",
		    static_cast<unsigned long>(job));
}

} // namespace

void report_job_end(const PlugstackArgs &args)
{
	const char *id = std::getenv("SLURM_JOB_ID");
	if (!id)
		return;
	gos_req_job req{std::strtoull(id, nullptr, 10)};
	// Ends what its steps left (ENOENT: they all ended, or it was never ours).
	ask_daemon(args.socket, GOS_REQ_JOB_END, req);
	Outcome rep = ask_daemon(args.socket, GOS_REQ_REPORT, req);
	if (!rep.ok()) {
		if (rep.status == -ENOENT || rep.status == -ENOTCONN)	// not ours, or no daemon: nothing to say
			slurm_debug("[gpuoversub] job %s: no eviction report: %s", id, rep.error.c_str());
		else
			slurm_error("[gpuoversub] job %s: no eviction report: %s", id, rep.error.c_str());
		return;
	}
	auto report = nlohmann::json::parse(rep.body, nullptr, false);
	if (report.is_discarded() || !report.is_object()) {
		slurm_error("[gpuoversub] job %s: the daemon's report is not JSON", id);
		return;
	}
	try {
		std::istringstream lines(gpud::report_summary(report));
		for (std::string line; std::getline(lines, line);)
			slurm_info("[gpuoversub] %s", line.c_str());
		bool comment = args.report_admin_comment;
		try {
			auto cfg = config::load_config(args.config);
			comment = comment || cfg.report_admin_comment;
			std::string path = cfg.report_dir + "/job-" + std::string(id) + ".json";
			struct stat st;
			if (stat(path.c_str(), &st) != 0) {	// the daemon writes it; this covers a report it could not
				make_dirs(cfg.report_dir);
				write_file_atomically(path, report.dump(2) + "\n", 0640);
			}
		} catch (const std::exception &e) {
			slurm_debug("[gpuoversub] job %s: policy or report directory: %s", id, e.what());
		}
		if (comment)
			set_admin_comment(req.job_id, gpud::report_compact(report));
	} catch (const std::exception &e) {
		slurm_error("[gpuoversub] job %s: report incomplete: %s", id, e.what());
	}
}

} // namespace gos::spank
