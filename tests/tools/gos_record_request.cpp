// Sends one request to the record helper with gpuoversubd's own client
// (record_helper.cpp), and prints its answer line.
//   gos_record_request --connect SOCKET JOB START <RECORD
//       to the helper's socket (gpuoversub-record.socket); exit 0 when
//       an answer came, 1 when none did.
//   gos_record_request --spawn PROGRAM USER JOB START <RECORD
//       runs PROGRAM --serve-record USER on one end of a socketpair, as
//       systemd's Accept=yes would (its peer is this process), and exits
//       with its status.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <iterator>
#include <string>

#include "daemon/gpud/record_helper.hpp"

using namespace std::chrono_literals;

int main(int argc, char **argv)
{
	bool connect = argc == 5 && std::strcmp(argv[1], "--connect") == 0;
	bool spawn = argc == 6 && std::strcmp(argv[1], "--spawn") == 0;
	if (!connect && !spawn) {
		std::fprintf(stderr, "usage: gos_record_request --connect SOCKET JOB START <RECORD\n"
				     "       gos_record_request --spawn PROGRAM USER JOB START <RECORD\n");
		return 2;
	}
	std::string record((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
	std::uint64_t job = std::strtoull(argv[argc - 2], nullptr, 10);
	std::int64_t start = std::strtoll(argv[argc - 1], nullptr, 10);
	if (connect) {
		gos::gpud::HelperAnswer a = gos::gpud::ask_record_helper(argv[2], job, start, record, 30s);
		std::printf("%s\n", a.line.c_str());
		return a.is == gos::gpud::HelperAnswer::Is::no_answer;
	}
	int status = 0;
	gos::gpud::HelperAnswer a =
		gos::gpud::ask_record_helper_spawned(argv[2], argv[3], job, start, record, 30s, &status);
	std::printf("%s\n", a.line.c_str());
	return status;
}
