// A job's eviction report: JSON for tools, a summary for people, written
// atomically to the report directory when the job ends.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "daemon/gpud/gpus.hpp"
#include "daemon/gpud/jobs.hpp"
#include "common/report/report_text.hpp"

namespace gos::gpud {

// live[i] are the engine counters of job.gpus[i] now (zeros if none).
nlohmann::json build_report(const Job &job, const std::vector<gos_tenant_stats> &live, const std::vector<Gpu> &gpus);
// <dir>/job-<id>.json, the report's path.
std::string report_path(const std::string &dir, std::uint64_t job);
// Writes <dir>/job-<id>.json (and .txt); throws on I/O failure.
void write_report(const std::string &dir, const nlohmann::json &report, bool summary);

} // namespace gos::gpud
