// The simulator's outputs: a table for people, CSV for tools, SVG for eyes.
#pragma once

#include <ostream>
#include <vector>

#include "sim/replay.hpp"

namespace gos::sim {

void write_table(std::ostream &out, const Trace &trace, const ReplayOptions &opt,
		 const std::vector<ReplayPolicy> &policies, const std::vector<PolicyResult> &results);
void write_csv(std::ostream &out, const std::vector<PolicyResult> &results);
// Resident bytes per tenant over time, one panel per policy.
void write_svg(std::ostream &out, const Trace &trace, const std::vector<PolicyResult> &results);

} // namespace gos::sim
