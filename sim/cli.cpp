// The simulator's command line, shared by gpuoversub-sim and
// `gpuoversubctl simulate`. See gpuoversub-sim(1).
#include <getopt.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "common/util/units.hpp"
#include "sim/cli.hpp"
#include "sim/report.hpp"

using namespace gos::sim;

namespace {

const char *usage_text =
	"usage: gpuoversub-sim [options] TRACE\n"
	"Replays a GPU allocation trace against the gpuoversub engine under\n"
	"fcfs, static, uvm-lru, gpuswap, gprioswap and gpuoversub, side by side.\n\n"
	"  --policies LIST     comma-separated subset of the policies above, or\n"
	"                      gpuoversub-undamped (without the lending backoff)\n"
	"  --capacity SIZE     GPU memory, overriding the trace's capacity lines\n"
	"  --chunk-size SIZE   chunk size (default 2M; 64K to 1G, multiple of 4K)\n"
	"  --hbm-gbps N        device memory bandwidth for the cost model (3350)\n"
	"  --link-gbps N       host link bandwidth for the cost model (55)\n"
	"  --tick-ms N         return interval in milliseconds (50)\n"
	"  --persist S         gpuoversub's throttle after S seconds (5)\n"
	"  --lend-backoff MS   gpuoversub's first lending backoff (1000)\n"
	"  --lend-backoff-max S  and its ceiling in seconds (30)\n"
	"  --seed N            random seed for chunk selection (1)\n"
	"  --csv               print CSV instead of the table\n"
	"  --svg FILE          also write a plot of resident memory over time\n"
	"  --quiet             no progress on the terminal\n"
	"  -h, --help          this text\n";

[[noreturn]] void usage_error(const std::string &why)
{
	std::cerr << "gpuoversub-sim: " << why << "\n" << usage_text;
	std::cerr.flush();
	std::exit(2);
}

double positive(const char *opt, const char *arg)
{
	char *end = nullptr;
	double v = std::strtod(arg, &end);
	if (!end || *end || !(v > 0) || v > 1e9)
		usage_error(std::string(opt) + " needs a positive number, not '" + arg + "'");
	return v;
}

std::uint64_t size_arg(const char *opt, const char *arg)
{
	auto v = gos::parse_size(arg);
	if (!v || !*v)
		usage_error(std::string(opt) + " needs a byte size such as 80G or 2M, not '" + arg + "'");
	return *v;
}

std::vector<ReplayPolicy> select_policies(const ReplayOptions &opt, const std::string &list)
{
	std::vector<ReplayPolicy> all = policies(opt), chosen;
	if (list.empty())
		return all;
	all.push_back(undamped(opt));
	std::stringstream in(list);
	std::string name;
	while (std::getline(in, name, ',')) {
		auto it = std::find_if(all.begin(), all.end(), [&](const ReplayPolicy &p) { return p.name == name; });
		if (it == all.end())
			usage_error("unknown policy '" + name +
				    "'; choose from fcfs, static, uvm-lru, gpuswap, gprioswap, gpuoversub, gpuoversub-undamped");
		chosen.push_back(*it);
	}
	return chosen;
}

// Progress on a terminal only, at most ten times a second.
class ProgressLine {
public:
	explicit ProgressLine(bool on) : on_(on && isatty(STDERR_FILENO)) {}
	Progress for_policy(const std::string &name)
	{
		if (!on_)
			return {};
		return [this, name](std::size_t done, std::size_t total) {
			auto now = std::chrono::steady_clock::now();
			if (done != total && now - last_ < std::chrono::milliseconds(100))
				return;
			last_ = now;
			std::fprintf(stderr, "\r[gpuoversub-sim] %-10s %zu/%zu events (%3.0f%%)%s", name.c_str(), done,
				     total, 100.0 * static_cast<double>(done) / static_cast<double>(total),
				     done == total ? "\n" : "");
		};
	}

private:
	bool on_;
	std::chrono::steady_clock::time_point last_{};
};

} // namespace

int gos::sim::sim_main(int argc, char **argv)
{
	ReplayOptions opt;
	std::string policy_list, svg_path;
	bool csv = false, quiet = false;
	enum { POLICIES = 256, CAPACITY, CHUNK, HBM, LINK, TICK, PERSIST, BACKOFF, BACKOFF_MAX, SEED, CSV, SVG, QUIET };
	static const option longopts[] = {
		{"policies", required_argument, nullptr, POLICIES}, {"capacity", required_argument, nullptr, CAPACITY},
		{"chunk-size", required_argument, nullptr, CHUNK}, {"hbm-gbps", required_argument, nullptr, HBM},
		{"link-gbps", required_argument, nullptr, LINK}, {"tick-ms", required_argument, nullptr, TICK},
		{"persist", required_argument, nullptr, PERSIST}, {"lend-backoff", required_argument, nullptr, BACKOFF},
		{"lend-backoff-max", required_argument, nullptr, BACKOFF_MAX}, {"seed", required_argument, nullptr, SEED},
		{"csv", no_argument, nullptr, CSV}, {"svg", required_argument, nullptr, SVG},
		{"quiet", no_argument, nullptr, QUIET}, {"help", no_argument, nullptr, 'h'}, {nullptr, 0, nullptr, 0},
	};
	for (int c; (c = getopt_long(argc, argv, "h", longopts, nullptr)) != -1;) {
		switch (c) {
		case POLICIES: policy_list = optarg; break;
		case CAPACITY:
			opt.capacity = size_arg("--capacity", optarg);
			if (opt.capacity >= (1ULL << 48))
				usage_error("--capacity must be below 256 TiB");
			break;
		case CHUNK: {
			std::uint64_t cs = size_arg("--chunk-size", optarg);
			if (cs < GOS_CHUNK_MIN || cs > (1ULL << 30) || cs % 4096)
				usage_error("--chunk-size must be 64K to 1G and a multiple of 4K");
			opt.chunk_size = static_cast<std::uint32_t>(cs);
			break;
		}
		case HBM: opt.hbm_gbps = positive("--hbm-gbps", optarg); break;
		case LINK: opt.link_gbps = positive("--link-gbps", optarg); break;
		case TICK: opt.tick_s = positive("--tick-ms", optarg) / 1000; break;
		case PERSIST: opt.persist_s = positive("--persist", optarg); break;
		case BACKOFF: opt.lend_backoff_ns = static_cast<std::uint64_t>(positive("--lend-backoff", optarg) * 1e6); break;
		case BACKOFF_MAX:
			opt.lend_backoff_max_ns = static_cast<std::uint64_t>(positive("--lend-backoff-max", optarg) * 1e9);
			break;
		case SEED: opt.seed = static_cast<std::uint64_t>(positive("--seed", optarg)); break;
		case CSV: csv = true; break;
		case SVG: svg_path = optarg; break;
		case QUIET: quiet = true; break;
		case 'h': std::cout << usage_text; return 0;
		default: usage_error("unknown option");
		}
	}
	if (optind + 1 != argc)
		usage_error(optind == argc ? "no trace given" : "one trace at a time");
	if (opt.lend_backoff_max_ns < opt.lend_backoff_ns)
		usage_error("--lend-backoff-max must not be shorter than --lend-backoff");
	try {
		Trace trace = load_trace(argv[optind]);
		std::vector<ReplayPolicy> chosen = select_policies(opt, policy_list);
		ProgressLine progress(!quiet);
		std::vector<PolicyResult> results;
		for (const ReplayPolicy &p : chosen)
			results.push_back(replay(trace, p, opt, progress.for_policy(p.name)));
		if (csv)
			write_csv(std::cout, results);
		else
			write_table(std::cout, trace, opt, chosen, results);
		if (!svg_path.empty()) {
			std::ofstream svg(svg_path);
			write_svg(svg, trace, results);
			svg.close();
			if (!svg)
				throw std::runtime_error(svg_path + ": cannot write the plot");
			if (!csv)
				std::cout << "\nPlot written to " << svg_path << "\n";
		}
	} catch (const std::exception &e) {
		std::cerr << "gpuoversub-sim: " << e.what() << "\n";
		return 1;
	}
	return 0;
}
