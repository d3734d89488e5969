#include "daemon/gpud/final_reports.hpp"

#include <sys/stat.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <string>

#include "common/util/log.hpp"
#include "daemon/gpud/report.hpp"

namespace gos::gpud {

FinalReports::FinalReports(const config::Config &cfg, const std::vector<Gpu> &gpus) : cfg_(cfg), gpus_(gpus)
{
	const char *fault = std::getenv("GPUOVERSUBD_FAULT");
	kill_after_report_ = fault && std::string(fault) == "kill-after-report";
}

bool FinalReports::write(const Job &job, std::vector<report::GpuWeight> weights)
{
	report::Report rep = build_report(job, {}, gpus_);
	rep.weights = std::move(weights);
	try {
		write_report(cfg_.policy.report_dir, rep, cfg_.policy.report_summary);
	} catch (const std::exception &e) {
		// Retried every checkpoint; said once, then once a minute.
		auto limit = failures_.try_emplace(job.id, std::chrono::minutes(1)).first;
		GOS_LOG_LIMITED(limit->second, log::error,
				"report for job " << job.id << " not written: " << e.what() << "; will retry");
		return false;
	}
	failures_.erase(job.id);
	GOS_LOG(log::notice, report_summary(rep));
	if (kill_after_report_)
		::raise(SIGKILL);
	return true;
}

bool FinalReports::written(std::uint64_t job) const
{
	struct stat st{};
	return ::stat(report_path(cfg_.policy.report_dir, job).c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

} // namespace gos::gpud
