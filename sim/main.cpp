// gpuoversub-sim: replays an allocation trace against the real engine under
// six policies side by side. See gpuoversub-sim(1).
#include "sim/cli.hpp"

int main(int argc, char **argv)
{
	return gos::sim::sim_main(argc, argv);
}
