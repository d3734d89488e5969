// The job epilog's part: end the job in gpuoversubd (whatever steps did
// not), log its report's summary, make sure the report is on disk, and
// optionally put the compact line in the job's AdminComment. Failures only
// log: a non-zero epilog would drain the node.
#pragma once

#include "spank/plugstack_args.hpp"

namespace gos::spank {

void report_job_end(const PlugstackArgs &args);

} // namespace gos::spank
