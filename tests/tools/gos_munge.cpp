// common/util/munge.hpp from the shell, against a real munged
// (tests/integration/slurm/munge.bats):
//   gos_munge encode SOCKET TTL PAYLOAD   prints the credential
//   gos_munge decode SOCKET CREDENTIAL    prints "STATUS UID GID", then
//                                         the payload on a line of its own
// Exit 0 when munged encoded, or decoded a good credential; 1 otherwise,
// munged's words on stderr.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/util/munge.hpp"

int main(int argc, char **argv)
{
	const bool encode = argc == 5 && std::strcmp(argv[1], "encode") == 0;
	if (!encode && !(argc == 4 && std::strcmp(argv[1], "decode") == 0)) {
		std::fprintf(stderr, "usage: gos_munge encode SOCKET TTL PAYLOAD | decode SOCKET CREDENTIAL\n");
		return 2;
	}
	if (encode) {
		std::string credential;
		if (auto error = gos::munge::encode(argv[4], std::atoi(argv[3]), argv[2], credential)) {
			std::fprintf(stderr, "gos_munge: %s\n", error->c_str());
			return 1;
		}
		std::printf("%s\n", credential.c_str());
		return 0;
	}
	const auto d = gos::munge::decode(argv[3], argv[2]);
	std::printf("%s %ld %ld\n%s\n", gos::munge::status_name(d.status), static_cast<long>(d.uid),
		    static_cast<long>(d.gid), d.payload.c_str());
	if (d.status != gos::munge::Decoded::Status::ok) {
		std::fflush(stdout);	// the status line first, for the test's `run`
		std::fprintf(stderr, "gos_munge: %s\n", d.error.c_str());
		return 1;
	}
	return 0;
}
