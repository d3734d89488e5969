// gpuoversub's segment of a job's AdminComment, updated by every node of the
// job, often all at once (their steps end together). Slurm offers no
// compare-and-swap: slurm_update_job replaces the field whole, so two nodes
// that read the same field and write their own part each drop the other's.
// Each node therefore reads, merges its part, writes, waits a while longer
// than its own read-to-write window (plus jitter), and reads again: if its
// part is gone, someone wrote over it, and it tries again, a bounded number
// of times with growing jittered pauses. Through the Slurm API of the
// calling process: no node talks to another.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "common/report/report.hpp"

namespace gos::spank {

struct CommentOutcome {
	bool ok = false;
	int attempts = 0;
	std::string error;	// why not, when !ok
};

// Which part a node writes: its Slurm name, the job's run its figures are
// of (the step's SLURM_RESTART_COUNT, kept only if it is the job's restart
// count now or the one before, which a requeue may already have moved on;
// negative: the job's restart count now) and the job's nodes as
// the step saw them (SLURM_JOB_NODELIST; empty: the job record's, which a
// requeued job no longer has).
struct PartOf {
	std::string node;
	int run = -1;
	std::string job_nodes;
};

// Puts this node's part of the job's report into the job's AdminComment.
// pause_ms, for tests only, widens the read-to-write window so that
// concurrent writers surely race.
CommentOutcome put_node_part(std::uint64_t job, const report::Report &report, const PartOf &who, unsigned pause_ms = 0);
// Slurm refuses AdminComment updates once the job finished, and a batch job
// finishes when its batch step does, often before the other nodes' last
// steps have put their parts in. So the batch step, on its way out, waits
// until every node of the job has a part, for at most `limit`; it returns
// the nodes that still have none (a node that failed, say), for the log.
std::vector<std::string> wait_for_all_parts(std::uint64_t job, std::chrono::milliseconds limit);

} // namespace gos::spank
