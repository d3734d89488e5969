// The end of a job on this node: the epilog (root) ends the job in
// gpuoversubd (whatever steps did not), logs its report's summary, makes
// sure the report is on disk and, when AdminComment is wanted, hands this
// node's part of the run to the daemon for the job-wide record
// (run_end.hpp). Failures only log: a non-zero epilog would drain the node.
#pragma once

#include "spank/plugstack_args.hpp"

namespace gos::spank {

// ASKED: the job asked for --gpu-mem-oversub (its option, as the epilog
// sees it), so this node has a part even where no step of it ran.
void report_job_end(const PlugstackArgs &args, bool asked);

} // namespace gos::spank
