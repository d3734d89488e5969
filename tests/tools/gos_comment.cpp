// One node's AdminComment update, as the SPANK plugin does it at the end of
// the node's last step, for the tests that race several at once:
//   gos_comment JOB NODE PAUSE_MS REPORT.json
// prints "NODE: ok after N attempt(s)" or the error, and exits 0 or 1.
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "common/compat/slurm.hpp"

#include "spank/comment_update.hpp"

int main(int argc, char **argv)
{
	if (argc != 5) {
		std::fprintf(stderr, "usage: gos_comment JOB NODE PAUSE_MS REPORT.json\n");
		return 2;
	}
	std::ifstream in(argv[4]);
	gos::report::Report report;
	try {
		report = nlohmann::json::parse(in).get<gos::report::Report>();
	} catch (const nlohmann::json::exception &e) {
		std::fprintf(stderr, "gos_comment: %s is no report: %s\n", argv[4], e.what());
		return 2;
	}
	slurm_init(nullptr);	// libslurm's plugins (24.11: "No hash plugins loaded" without)
	auto o = gos::spank::put_node_part(std::strtoull(argv[1], nullptr, 10), report, {argv[2], -1, ""},
					   static_cast<unsigned>(std::strtoul(argv[3], nullptr, 10)));
	if (!o.ok) {
		std::printf("%s: failed after %d attempt(s): %s\n", argv[2], o.attempts, o.error.c_str());
		return 1;
	}
	std::printf("%s: ok after %d attempt(s)\n", argv[2], o.attempts);
	return 0;
}
