// The epilog's end of a run for the job-wide channel (docs/jobwide.md, "One
// writer per run"): this node's part of the run, sealed by root with
// munged, handed to its gpuoversubd (JOBWIDE_PART), which sends it on to
// the run's writer. Nothing here waits on another node or on slurmctld.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/config/config.hpp"
#include <gpuoversub/abi.h>
#include "common/report/report.hpp"
#include "spank/plugstack_args.hpp"

namespace gos::spank {

// A run as the epilog knows it: its head (job, start, run, node, number of
// nodes) and SLURM_NODELIST.
struct EpilogRun {
	gos_req_jobwide head{};
	std::string nodelist;
};

// The run of JOB that ends here, from the epilog's environment:
// SLURMD_NODENAME, SLURM_NODELIST, SLURM_JOB_NUM_NODES,
// SLURM_JOB_RESTART_COUNT and, from Slurm 23.02, SLURM_JOB_START_TIME.
// Without a start the daemon is told the run's end now, before JOB_END
// (its facts forget the job soon after), and names the run it saw; a job
// it never saw (none of its steps ran here) has none. nullopt: no run, the
// reason logged.
std::optional<EpilogRun> epilog_run(const PlugstackArgs &args, std::uint64_t job);

// Seals REPORT (the daemon's final report of the job here, or an empty one
// for a node where the job ran no step) as this node's part of RUN and
// hands it to the daemon. Failures are logged.
void send_part(const PlugstackArgs &args, const config::Config &cfg, const EpilogRun &run,
	       const report::Report &report);

} // namespace gos::spank
