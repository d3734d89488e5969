// reports.dir pruned by age and by size, as the admin sets (reports.keep,
// reports.max_size; issue 50, finding 10): a node keeps a job's report,
// its summary and, on a writer, each run's job-wide file, and nothing else
// removed them. Only the names the daemon and the epilog write go
// (job-*.json, job-*.txt), and only regular files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gos::gpud {

struct ReportFile {
	std::string name;
	std::int64_t mtime = 0;	// seconds since the epoch
	std::uint64_t bytes = 0;
};

// The FILES that go, as of NOW: older than KEEP_S (0: none by age), then
// the oldest (by name where the time is the same) while the rest are over
// MAX_BYTES (0: no cap).
std::vector<ReportFile> reports_to_prune(std::vector<ReportFile> files, std::int64_t now, std::int64_t keep_s,
					 std::uint64_t max_bytes);

struct Pruned {
	std::size_t files = 0;
	std::uint64_t bytes = 0;
	std::vector<std::string> problems;	// files that could not be removed, at most a few
};
// Lists DIR's report files (a bounded number a pass) and removes those
// reports_to_prune names.
Pruned prune_reports(const std::string &dir, std::int64_t now, std::int64_t keep_s, std::uint64_t max_bytes);

} // namespace gos::gpud
