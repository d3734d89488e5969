// The job-wide view of a job that ran on several nodes, for `gpuoversubctl
// report`: gpuoversub's segment of the job's AdminComment (admin_comment.hpp),
// where every node of the job put its part. Read as any user may, the
// field alone: sacct where accounting keeps the job, else slurmctld's
// record through gpuoversub-slurm-facts --admin-comment while it still
// holds the job. Nodes never ask each other.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace gos::ctl {

struct JobWide {
	nlohmann::json ours;	// the segment; empty when Slurm has none for the job
	std::string source;	// "sacct" or "slurmctld"
};

JobWide job_wide_view(std::uint64_t job);
// The view as text, a line for the totals and one per node and run.
std::string job_wide_text(const JobWide &view);

} // namespace gos::ctl
