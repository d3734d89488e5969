// A job's report as text: the summary people read (the daemon's .txt file,
// the SPANK epilog's log line). AdminComment's part: admin_comment.hpp.
// Apart from the rest of the report code, so the SPANK plugin can link it.
#pragma once

#include <string>

#include "common/report/report.hpp"

namespace gos::report {

std::string report_summary(const Report &report);
// Each GPU's weight and the factors that made it, one line per GPU: part of
// the summary, and of `gpuoversubctl report`.
std::string weights_text(const Report &report);
// What the node lost to its gpuoversubd's restarts under the job, one line each.
std::string restarts_text(const Report &report);
// "rank 3 (pid 812)", or "process 812" where no MPI rank is known.
std::string who_ran(const Rank &rank);
// " on node n1, GPU 0 (0000:17:00.0), 1 (0000:18:00.0)": where the report's
// figures come from; empty for a report that names neither.
std::string node_and_gpus(const Report &report);

} // namespace gos::report
