// gpuoversubd: the per-node daemon. See gpuoversubd(8).
#include <getopt.h>
#include <sys/prctl.h>

#include <cstdlib>
#include <iostream>
#include <thread>

#include "common/util/log.hpp"
#include "common/util/munge.hpp"
#include "daemon/gpud/directories.hpp"
#include "daemon/gpud/server.hpp"

using namespace gos;

namespace {

const char *usage_text =
	"usage: gpuoversubd [options]\n"
	"The gpuoversub node daemon: fair GPU-memory oversubscription for Slurm jobs.\n\n"
	"  -c, --config FILE   policy file (default /etc/gpuoversub/gpuoversub.yaml)\n"
	"      --check         check the policy file and the GPUs, then exit\n"
	"  -v, --verbose       log debug messages\n"
	"  -h, --help          this text\n";

// How long a sealed answer of the job-wide door is good for.
constexpr int answer_ttl_s = 60;

// Job-wide records need munged: each node's part is sealed with it. A site
// without one (Slurm's auth/slurm needs none) is told once, at start, and
// the daemon serves on: parts seal as soon as a munged answers. Asked off
// the start's path, since libmunge waits up to 10 s on a munged that
// accepts and never answers; detached, so that a stop never waits on it.
void say_if_no_munged(const config::Config &cfg)
{
	if (!cfg.policy.report_admin_comment)
		return;
	std::thread([socket = cfg.start.jobwide_munge_socket, reports = cfg.policy.report_dir] {
		std::string credential;
		if (auto why = munge::encode("", 0, socket, credential))
			GOS_LOG(log::warning, "job-wide records (reports.admin_comment) need munged, and none answers at "
						      << socket << " (jobwide.munge_socket): " << *why
						      << "; install munge and start munged on every node, or set "
							 "jobwide.munge_socket to its socket, or turn reports.admin_comment off; "
							 "until then no node's part is sealed, and each node's own report is still "
							 "written to "
						      << reports << " and slurmd's log");
	}).detach();
}

} // namespace

int main(int argc, char **argv)
{
	std::string config_path = "/etc/gpuoversub/gpuoversub.yaml";
	bool check = false;
	static const option longopts[] = {{"config", required_argument, nullptr, 'c'}, {"check", no_argument, nullptr, 'k'},
					  {"verbose", no_argument, nullptr, 'v'}, {"help", no_argument, nullptr, 'h'},
					  {nullptr, 0, nullptr, 0}};
	for (int c; (c = getopt_long(argc, argv, "c:vh", longopts, nullptr)) != -1;) {
		switch (c) {
		case 'c': config_path = optarg; break;
		case 'k': check = true; break;
		case 'v': log::threshold() = log::debug; break;
		case 'h': std::cout << usage_text; return 0;
		default: std::cerr << usage_text; return 2;
		}
	}
	if (optind != argc) {
		std::cerr << "gpuoversubd: unexpected argument '" << argv[optind] << "'\n" << usage_text;
		return 2;
	}
	// The unit's ambient CAP_KILL and CAP_NET_BIND_SERVICE stay the daemon's own (permitted and
	// effective): cleared from the ambient set, it is not handed on to the
	// programs the daemon runs (the Slurm facts reader parses slurmctld's
	// replies).
	::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	try {
		config::Config cfg = config::load_config(config_path);
		gpud::Discovery gpus = gpud::discover_gpus(cfg);
		for (const auto &g : gpus.gpus)
			GOS_LOG(log::info, "GPU " << g.index << ": " << g.pci_bus_id << (g.uuid.empty() ? "" : " " + g.uuid) << ", "
						  << g.memory << " bytes, NUMA node " << g.numa_node
						  << (g.simulated ? " (simulated)" : "")
						  << (g.parent_uuid.empty() ? "" : ", GPU instance " + std::to_string(g.gpu_instance) +
										   " of " + g.parent_uuid));
		for (const auto &note : gpus.notes)
			GOS_LOG(log::warning, note);
		// Before anything is created or written, and again on what start created.
		auto problems = gpud::directory_problems(cfg);
		if (problems.empty() && !check) {
			gpud::make_own_directories(cfg);
			problems = gpud::directory_problems(cfg);
		}
		for (const auto &p : problems)
			GOS_LOG(log::error, "gpuoversubd: " << config_path << ": " << p);
		if (!problems.empty())
			return 1;
		if (check) {
			std::cout << config_path << ": policy valid; " << gpus.gpus.size() << " GPU(s) from " << gpus.source << "\n";
			return 0;
		}
		gpud::hold_own_directories(cfg);
		auto engine = gpud::make_engine(cfg);
		std::string where = engine.clients ? "in the daemon" : "in the kernel (/dev/gpuoversub-control)";
		gpud::Daemon daemon(cfg, std::move(gpus), std::move(engine));
		boost::asio::io_context io;
		const std::string &munge_socket = cfg.start.jobwide_munge_socket;
		gpud::Munged munged{[munge_socket](const std::string &credential) { return munge::decode(credential, munge_socket); },
				    // An answer is read within a sender's 10 s.
				    [munge_socket](const std::string &payload, std::string &credential) {
					    return munge::encode(payload, answer_ttl_s, munge_socket, credential);
				    }};
		gpud::Server server(io, daemon, config_path, std::move(munged));
		GOS_LOG(log::notice, "gpuoversubd serving " << cfg.start.socket << " with the engine " << where);
		say_if_no_munged(cfg);
		server.run();
	} catch (const std::exception &e) {
		GOS_LOG(log::error, "gpuoversubd: " << e.what());
		return 1;
	}
	return 0;
}
