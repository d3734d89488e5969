// A job's report as text: the summary people read (the daemon's .txt file,
// the SPANK epilog's log line) and the compact line for AdminComment.
// Apart from the rest of the report code, so the SPANK plugin can link it.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace gos::gpud {

std::string report_summary(const nlohmann::json &report);
// Each GPU's weight and the factors that made it, one line per GPU: part of
// the summary, and of `gpuoversubctl report`.
std::string weights_text(const nlohmann::json &report);
// "rank 3 (pid 812)", or "process 812" where no MPI rank is known.
std::string who_ran(const nlohmann::json &rank);
std::string report_compact(const nlohmann::json &report);

} // namespace gos::gpud
