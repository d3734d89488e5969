// The job-wide view of a job that ran on several nodes, for `gpuoversubctl
// report`: gpuoversub's segment of the job's AdminComment (admin_comment.hpp).
// From issue 30 on it is one record per run (version 3, jobwide_record.hpp),
// in accounting only: `sacct -D` gives every run of a requeued job, one line
// each. Before it, version 2 held every node's part; it is read from sacct,
// else from slurmctld's record through gpuoversub-slurm-facts
// --admin-comment while slurmctld still holds the job (docs/jobwide.md,
// "Reading it"). Read as any user may, the field alone. Nodes never ask
// each other.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gos::ctl {

// One run's accounting record, as far as gpuoversub's segment goes.
struct RunRecord {
	nlohmann::json ours;	// the segment, version 3 or later; empty when not read
	// (Defaulted, so that {ours} or {ours, newer} initializes the rest.)
	std::string newer{};	// a newer release's compressed segment ("gpuoversub=z:...")
	bool unparsed{false};	// the field names gpuoversub= but holds no segment that parses
};

struct JobWide {
	nlohmann::json ours;	// a version 2 segment; empty when Slurm has none for the job
	std::string source;	// where the version 2 segment came from: "sacct" or "slurmctld"
	std::vector<RunRecord> runs;	// the runs with a segment, in sacct's order
};

// The view from the lines of `sacct -j J -X -D -n -P -o AdminComment` (one
// per run) and slurmctld's field (`gpuoversub-slurm-facts --admin-comment
// J`): the latter counts only when the lines hold no segment, and only a
// version 2 one (slurmctld never holds a version 3 record).
JobWide job_wide_from(const std::string &sacct_lines, const std::string &slurmctld_field);
// The AdminComment lines of job JOB's own records from `sacct -j JOB -X -D
// -n -P -o JobIDRaw,AdminComment`: an array job's id gives every task's
// record, each of another raw id, and only JOB's are its runs (issue 50,
// finding 8).
std::string own_runs(const std::string &sacct_lines, std::uint64_t job);
JobWide job_wide_view(std::uint64_t job);
// The view as text: version 2 a line for the totals and one per node and
// run; version 3 a few lines per run. A record this release does not read
// is said in one line.
std::string job_wide_text(const JobWide &view);
// The runs' records for `gpuoversubctl report --json` ("job_wide_runs"): each
// run's segment as written; a newer release's as {"newer": TEXT}.
nlohmann::json job_wide_runs_json(const JobWide &view);

} // namespace gos::ctl
