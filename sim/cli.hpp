// The simulator's command line, for gpuoversub-sim and gpuoversubctl.
#pragma once

namespace gos::sim {

int sim_main(int argc, char **argv);

} // namespace gos::sim
