// The end of a job: the epilog ends the job in gpuoversubd (whatever steps
// did not), logs its report's summary and makes sure the report is on
// disk; the last step's exit puts the node's part in AdminComment, while
// slurmctld still accepts it (it refuses updates once the job finished).
// Failures only log: a non-zero epilog would drain the node.
#pragma once

#include <cstdint>
#include <string>

#include "spank/comment_update.hpp"
#include "spank/plugstack_args.hpp"

namespace gos::spank {

void report_job_end(const PlugstackArgs &args);
// If the job's report on this node is final and AdminComment is wanted,
// puts this node's part in it (comment_update.hpp). who.node empty: the
// report's host name.
// The batch step then waits for the other nodes' parts (comment_update.hpp).
void comment_when_over(const PlugstackArgs &args, std::uint64_t job, PartOf who, bool batch_step);

} // namespace gos::spank
