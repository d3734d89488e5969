// common/util/hostlist.hpp from the shell, for the round trip with
// scontrol (tests/integration/slurm/hostlist.bats):
//   gos_hostlist compress NAME...   prints the expression
//   gos_hostlist expand EXPRESSION  prints its names, one a line
// A refused expression or name: the reason on stderr, exit 1.
#include <cstdio>
#include <cstring>

#include "common/util/hostlist.hpp"

int main(int argc, char **argv)
{
	if (argc < 2 || (std::strcmp(argv[1], "expand") == 0 && argc != 3) ||
	    (std::strcmp(argv[1], "compress") != 0 && std::strcmp(argv[1], "expand") != 0)) {
		std::fprintf(stderr, "usage: gos_hostlist compress NAME... | expand EXPRESSION\n");
		return 2;
	}
	try {
		if (std::strcmp(argv[1], "expand") == 0) {
			for (const auto &name : gos::expand_hostlist(argv[2]))
				std::printf("%s\n", name.c_str());
		} else {
			std::printf("%s\n", gos::compress_hostlist({argv + 2, argv + argc}).c_str());
		}
	} catch (const gos::HostlistError &e) {
		std::fprintf(stderr, "gos_hostlist: %s\n", e.what());
		return 1;
	}
	return 0;
}
