// A job's final report, written to the report directory as the job ends.
// A report the disk refuses (full, say) is tried again by the caller every
// checkpoint, its error logged once and then once a minute; nothing is lost.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/config/config.hpp"
#include "common/report/report.hpp"
#include "common/util/rate_limit.hpp"
#include "daemon/gpud/gpus.hpp"
#include "daemon/gpud/jobs.hpp"

namespace gos::gpud {

class FinalReports {
public:
	FinalReports(const config::Config &cfg, const std::vector<Gpu> &gpus);
	// Writes the ended job's report with its weights, and logs its
	// summary; false if it could not be written (try again later).
	bool write(const Job &job, std::vector<report::GpuWeight> weights);
	// Whether the job's report is in the report directory.
	bool written(std::uint64_t job) const;

private:
	const config::Config &cfg_;
	const std::vector<Gpu> &gpus_;
	std::map<std::uint64_t, RateLimit> failures_;	// per job whose report is pending
	// Test only (GPUOVERSUBD_FAULT=kill-after-report): the daemon kills
	// itself with SIGKILL between a job's report and its record's removal.
	bool kill_after_report_ = false;
};

} // namespace gos::gpud
