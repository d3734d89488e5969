// The end of a job: the epilog ends the job in gpuoversubd (whatever steps
// did not), logs its report's summary and makes sure the report is on
// disk; the last step's exit puts the compact line in AdminComment, while
// slurmctld still accepts it (it refuses updates once the job finished).
// Failures only log: a non-zero epilog would drain the node.
#pragma once

#include <cstdint>

#include "spank/plugstack_args.hpp"

namespace gos::spank {

void report_job_end(const PlugstackArgs &args);
// If the job's report is final and AdminComment is wanted, sets it.
void comment_when_over(const PlugstackArgs &args, std::uint64_t job);

} // namespace gos::spank
