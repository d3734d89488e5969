// gpuoversubctl: what the node daemon knows, for admins and job owners.
// See gpuoversubctl(1).
#include <getopt.h>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "common/report/report_text.hpp"
#include "common/status/status.hpp"
#include "common/util/json_text.hpp"
#include "common/util/text.hpp"
#include "daemon/ctl/cdi.hpp"
#include "daemon/ctl/job_wide.hpp"
#include "common/util/units.hpp"
#include "common/proto/client.hpp"
#include "sim/cli.hpp"

using gos::format_bytes;
using nlohmann::json;

namespace {

const char *usage_text =
	"usage: gpuoversubctl [--socket PATH] [--json] COMMAND (options also after it)\n"
	"  status            GPUs and the jobs on them: shares, memory, throttle\n"
	"  jobs              jobs registered on this node\n"
	"  report JOB        a job's eviction report on this node (its owner or root),\n"
	"                    and the job's whole, all nodes, as Slurm keeps it\n"
	"  explain JOB       why a running job has its shares: weights and entitlements\n"
	"  requests          the daemon's requests: who may send each, its bytes and costs\n"
	"  simulate TRACE    replay a trace under six policies (see gpuoversub-sim(1))\n"
	"  cdi [--output FILE] [--config FILE]\n"
	"                    the CDI spec that binds the agent and the socket into\n"
	"                    OCI containers (gpuoversubctl cdi --help)\n"
	"options:\n"
	"  --socket PATH     daemon socket (default /run/gpuoversub/gpuoversubd.sock;\n"
	"                    as root, root's socket beside it when there is one)\n"
	"  --json            print the daemon's JSON\n";

[[noreturn]] void usage_error(const std::string &why)
{
	std::cerr << "gpuoversubctl: " << why << "\n" << usage_text;
	std::exit(2);
}

// The daemon, asked by the typed stubs of the request table (requests.def).
std::unique_ptr<gos::proto::Client> daemon_at(const std::string &socket)
{
	return std::make_unique<gos::proto::Client>(
		socket, gos::proto::Client::Options{gos::proto::Client::Path::privileged, 10000, std::nullopt});
}

// A reply's JSON, or why there is none.
json answer(const gos::proto::Reply &rep)
{
	if (rep.status < 0)
		throw gos::proto::ProtocolError(rep.error.empty() ? std::strerror(-rep.status) : rep.error);
	return json::parse(rep.body.begin(), rep.body.end());
}

// The daemon's reply in its struct (report.hpp, status.hpp), or why not.
template <class T>
T reply_as(const json &reply, const std::string &what)
{
	try {
		return reply.get<T>();
	} catch (const json::exception &e) {
		throw std::runtime_error("the daemon's " + what + " is not one this gpuoversubctl reads: " + e.what());
	}
}

// A partition, account or QOS name; an empty one is said, not left blank.
std::string named(const std::string &v)
{
	std::string s = gos::escaped(v);
	return s.empty() ? "(none)" : s;
}

void print_status(const gos::status::Status &s)
{
	std::printf("engine: %s, GPUs from %s; %zu job(s), %zu agent(s) connected\n", gos::escaped(s.engine).c_str(),
		    gos::escaped(s.gpu_source).c_str(), s.jobs, s.agents);
	for (const auto &g : s.gpus) {
		std::string name = g.pci_bus_id + (g.uuid.empty() ? "" : "  " + g.uuid);
		if (!g.mig_parent.empty())
			name += " (GPU instance " + std::to_string(g.gpu_instance) + " of " + g.mig_parent + ")";
		std::printf("\nGPU %u  %s  NUMA %d%s\n  capacity %s, used %s, outside gpuoversub %s\n", g.gpu,
			    gos::escaped(name).c_str(), g.numa_node, g.simulated ? "  (simulated)" : "",
			    format_bytes(g.capacity).c_str(), format_bytes(g.used).c_str(), format_bytes(g.external).c_str());
		if (g.tenants.empty()) {
			std::printf("  no jobs\n");
			continue;
		}
		std::printf("  %-10s %7s %12s %12s %12s %12s  %s\n", "job", "weight", "demand", "entitled", "on GPU",
			    "in host RAM", "state");
		for (const auto &t : g.tenants) {
			std::string state = t.engine.throttled ? "throttled" : t.engine.host ? "oversubscribed" : "ok";
			if (t.idle)
				state += ", idle";
			if (t.engine.unmanaged)
				state += ", " + format_bytes(t.engine.unmanaged) + " unmanaged";
			std::printf("  %-10llu %7.2f %12s %12s %12s %12s  %s\n", static_cast<unsigned long long>(t.job),
				    t.weight(), format_bytes(t.engine.demand).c_str(),
				    format_bytes(t.engine.entitlement).c_str(), format_bytes(t.engine.resident).c_str(),
				    format_bytes(t.engine.host).c_str(), state.c_str());
		}
	}
}

void print_jobs(const std::vector<gos::status::JobStatus> &jobs)
{
	if (jobs.empty()) {
		std::printf("no jobs registered\n");
		return;
	}
	std::printf("%-10s %6s %-12s %-12s %-8s %5s %5s %12s %12s\n", "job", "uid", "partition", "account", "qos", "steps",
		    "tasks", "on GPU", "in host RAM");
	for (const auto &j : jobs)
		std::printf("%-10llu %6u %-12s %-12s %-8s %5zu %5zu %12s %12s\n", static_cast<unsigned long long>(j.job),
			    j.uid, named(j.partition).c_str(), named(j.account).c_str(), named(j.qos).c_str(), j.steps,
			    j.tasks, format_bytes(j.resident).c_str(), format_bytes(j.host).c_str());
}

void print_job_line(std::uint64_t job, std::uint32_t uid, const std::string &partition, const std::string &account,
		    const std::string &qos)
{
	std::printf("job %llu (uid %u, partition %s, account %s, qos %s)\n", static_cast<unsigned long long>(job), uid,
		    named(partition).c_str(), named(account).c_str(), named(qos).c_str());
}

void print_explain(const gos::status::Explanation &e)
{
	print_job_line(e.job, e.uid, e.partition, e.account, e.qos);
	const auto &o = e.oversub;
	std::printf("--gpu-mem-oversub %s; ceiling on FACTOR %g (%s); a job here that gives none gets %s (%s)\n",
		    gos::escaped(o.asked).c_str(), o.ceiling, gos::escaped(o.ceiling_from).c_str(),
		    gos::escaped(o.fallback).c_str(), gos::escaped(o.fallback_from).c_str());
	for (const auto &g : e.gpus) {
		const auto &share = g.engine;
		std::printf("GPU %u: weight %.2f", g.rule.gpu, share.weight);
		for (const auto &s : g.rule.derivation)	// the factors, multiplied
			std::printf("\n  %-9s x %-8g %s", gos::escaped(s.fact).c_str(), s.factor, gos::escaped(s.why).c_str());
		std::printf("\n  minimum %s, limit %s, demand %s\n  entitled to %s: %s\n  on the GPU %s, in host RAM %s\n",
			    format_bytes(share.min_bytes).c_str(), share.limit ? format_bytes(share.limit).c_str() : "none",
			    format_bytes(share.demand).c_str(), format_bytes(share.entitlement).c_str(),
			    gos::escaped(share.entitlement_why).c_str(), format_bytes(share.resident).c_str(),
			    format_bytes(share.host).c_str());
		if (share.unmanaged)
			std::printf("  of it unmanaged %s: the job's processes without the agent hold it, and its share pays\n",
				    format_bytes(share.unmanaged).c_str());
	}
}

void print_report(const gos::report::Report &r)
{
	print_job_line(r.job, r.uid, r.partition, r.account, r.qos);
	if (std::string where = gos::report::node_and_gpus(r); !where.empty())
		std::printf(" %s\n", where.c_str());	// " on node n1, GPU 0 (...)"
	std::printf("  peak on GPU %s, peak in host RAM %s\n", format_bytes(r.peak_device_bytes).c_str(),
		    format_bytes(r.peak_host_bytes).c_str());
	std::printf("  evicted %s (%llu chunks), returned %s (%llu chunks)\n", format_bytes(r.bytes_evicted).c_str(),
		    static_cast<unsigned long long>(r.evictions), format_bytes(r.bytes_returned).c_str(),
		    static_cast<unsigned long long>(r.returns));
	std::printf("  oversubscribed %.1f s; allocation latency added p50 %.1f us, p99 %.1f us (%llu allocations)\n",
		    r.oversubscribed_s, r.alloc_latency_us.p50, r.alloc_latency_us.p99,
		    static_cast<unsigned long long>(r.alloc_latency_us.count));
	std::printf("  throttled %llu time(s), advice %llu time(s)\n", static_cast<unsigned long long>(r.throttle_events),
		    static_cast<unsigned long long>(r.advice_events));
	std::fputs(gos::report::weights_text(r).c_str(), stdout);
	std::fputs(gos::report::restarts_text(r).c_str(), stdout);
	for (const auto &k : r.ranks)
		std::printf("  %s: %llu allocations, %s allocated, %s evicted, %s returned\n", gos::report::who_ran(k).c_str(),
			    static_cast<unsigned long long>(k.allocs), format_bytes(k.bytes_allocated).c_str(),
			    format_bytes(k.bytes_evicted).c_str(), format_bytes(k.bytes_returned).c_str());
}

// The request table as the daemon has it, and the caps its costs name.
void print_requests(const gos::status::Requests &t)
{
	std::printf("wire version %d; frames of at most %s\n", t.wire_version, format_bytes(t.max_payload_bytes).c_str());
	std::printf("%3s %-14s %-7s %-22s %-20s %s\n", "#", "request", "caller", "payload", "reply", "cost");
	for (const auto &r : t.requests) {
		auto bytes = [](std::uint64_t lo, std::uint64_t hi) {
			return lo == hi ? std::to_string(hi) + " B" : std::to_string(lo) + "-" + std::to_string(hi) + " B";
		};
		std::string payload = gos::escaped(r.request) +
				      (r.request_max_bytes ? " " + bytes(r.request_min_bytes, r.request_max_bytes) : "");
		std::string reply = gos::escaped(r.reply) + (r.reply == "fixed"	  ? " " + std::to_string(r.reply_max_bytes) + " B"
							     : r.reply_max_bytes ? " <= " + format_bytes(r.reply_max_bytes)
										 : "");
		std::printf("%3u %-14s %-7s %-22s %-20s %s\n", r.number, gos::escaped(r.name).c_str(),
			    gos::escaped(r.caller).c_str(), payload.c_str(), reply.c_str(), gos::escaped(r.cost).c_str());
	}
	std::printf("caps:");
	for (const auto &[name, value] : t.caps)
		std::printf(" %s %llu", gos::escaped(name).c_str(), static_cast<unsigned long long>(value));
	std::printf("\n");
}

} // namespace

int main(int argc, char **argv)
{
	if (argc > 1 && std::strcmp(argv[1], "simulate") == 0)
		return gos::sim::sim_main(argc - 1, argv + 1);
	if (argc > 1 && std::strcmp(argv[1], "cdi") == 0)
		return gos::ctl::cdi_main(argc - 1, argv + 1);
	std::string socket = "/run/gpuoversub/gpuoversubd.sock";
	bool as_json = false;
	static const option longopts[] = {{"socket", required_argument, nullptr, 's'}, {"json", no_argument, nullptr, 'j'},
					  {"help", no_argument, nullptr, 'h'}, {nullptr, 0, nullptr, 0}};
	for (int c; (c = getopt_long(argc, argv, "h", longopts, nullptr)) != -1;) {
		switch (c) {
		case 's': socket = optarg; break;
		case 'j': as_json = true; break;
		case 'h': std::cout << usage_text; return 0;
		default: usage_error("unknown option");
		}
	}
	if (optind == argc)
		usage_error("no command given");
	std::string cmd = argv[optind++];
	try {
		json out;
		if (cmd == "status" && optind == argc) {
			out = answer(daemon_at(socket)->status());
			as_json ? void(std::cout << gos::json_text(out, 2) << "\n") : print_status(reply_as<gos::status::Status>(out, "status"));
		} else if (cmd == "jobs" && optind == argc) {
			out = answer(daemon_at(socket)->jobs());
			as_json ? void(std::cout << gos::json_text(out, 2) << "\n")
				: print_jobs(reply_as<std::vector<gos::status::JobStatus>>(out, "job list"));
		} else if ((cmd == "report" || cmd == "explain") && optind + 1 == argc) {
			char *end = nullptr;
			gos_req_job req{std::strtoull(argv[optind], &end, 10)};
			if (!end || *end || !req.job_id)
				usage_error(cmd + " needs a job id, not '" + std::string(argv[optind]) + "'");
			auto daemon = daemon_at(socket);
			out = answer(cmd == "report" ? daemon->report(req) : daemon->explain(req));
			// A report is this node's part; Slurm holds the job's whole.
			gos::ctl::JobWide wide;
			if (cmd == "report")
				wide = gos::ctl::job_wide_view(req.job_id);
			if (as_json) {
				if (!wide.ours.empty())
					out["job_wide"] = wide.ours;
				if (!wide.runs.empty())
					out["job_wide_runs"] = gos::ctl::job_wide_runs_json(wide);
				std::cout << gos::json_text(out, 2) << "\n";
			} else {
				cmd == "report" ? print_report(reply_as<gos::report::Report>(out, "report"))
						: print_explain(reply_as<gos::status::Explanation>(out, "explanation"));
				std::fputs(gos::ctl::job_wide_text(wide).c_str(), stdout);
			}
		} else if (cmd == "requests" && optind == argc) {
			out = answer(daemon_at(socket)->requests());
			as_json ? void(std::cout << gos::json_text(out, 2) << "\n")
				: print_requests(reply_as<gos::status::Requests>(out, "request table"));
		} else {
			usage_error("unknown command or wrong arguments: " + cmd);
		}
	} catch (const std::exception &e) {
		std::cerr << "gpuoversubctl: " << gos::escaped(e.what()) << "\n";
		return 1;
	}
	return 0;
}
