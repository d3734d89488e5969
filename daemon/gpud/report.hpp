// A job's eviction report (common/report/report.hpp) from its record: JSON
// for tools, a summary for people, written atomically to the report
// directory when the job ends.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "common/report/report.hpp"
#include "common/report/report_text.hpp"
#include "daemon/gpud/gpus.hpp"
#include "daemon/gpud/jobs.hpp"

namespace gos::gpud {

// live[i] are the engine counters of job.gpus[i] now (zeros if none). The
// report has no weights: the ledger's policy knows them.
report::Report build_report(const Job &job, const std::vector<gos_tenant_stats> &live, const std::vector<Gpu> &gpus);
// <dir>/job-<id>.json, the report's path.
std::string report_path(const std::string &dir, std::uint64_t job);
// Writes <dir>/job-<id>.json (and .txt); throws on I/O failure. The JSON
// begins with the job and its owner, {"job": N, "uid": U, ...}, so that
// stored_report_owner need not read the rest.
void write_report(const std::string &dir, const report::Report &report, bool summary);
// The owner of a stored report, from its first bytes alone; nullopt if the
// file is missing or does not begin as write_report writes.
std::optional<uid_t> stored_report_owner(const std::string &path);
// A stored report is read whole only below this size.
inline constexpr std::size_t stored_report_max = 16 << 20;

} // namespace gos::gpud
