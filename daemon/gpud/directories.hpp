// The directories gpuoversubd writes in as root: its state, the reports,
// the socket's and the Prometheus textfile's. Each must be the daemon's
// alone (see common/util/trusted_dir.hpp); gpuoversubd refuses to start,
// to --check a policy, or to reload one, that names a directory another
// user could plant files in.
#pragma once

#include <string>
#include <vector>

#include "common/config/config.hpp"

namespace gos::gpud {

// One line per directory at fault; empty when all are safe.
std::vector<std::string> directory_problems(const config::Config &cfg);

// Creates the state (0700), report and socket (0755) directories, so that
// they exist as the daemon's own before they are checked.
void make_own_directories(const config::Config &cfg);

// Holds the state, report and textfile directories open once they passed
// directory_problems: what is written there afterwards goes where the
// check looked, whatever is renamed or re-pointed since (held_dir.hpp).
// Throws std::runtime_error when one cannot be opened without a link.
void hold_own_directories(const config::Config &cfg);

} // namespace gos::gpud
