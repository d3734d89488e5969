#include "spank/run_end.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/spank.h>
}

#include "common/jobwide/seal.hpp"
#include "common/report/admin_comment.hpp"
#include "common/util/hostlist.hpp"
#include "spank/daemon_calls.hpp"

namespace gos::spank {
namespace {

std::string env(const char *name)
{
	const char *v = std::getenv(name);
	return v ? v : "";
}

// A number of the environment; 0 when unset or not one (slurmd sets these,
// no job can).
std::uint64_t env_number(const char *name)
{
	std::string v = env(name);
	char *end = nullptr;
	unsigned long long n = v.empty() ? 0 : std::strtoull(v.c_str(), &end, 10);
	return end && !*end ? n : 0;
}

// JOBWIDE_PART: the run's end, with FRAME (empty: none).
proto::Typed<gos_rep_jobwide> tell(const std::string &socket, const EpilogRun &run, const std::string &frame)
{
	gos_req_jobwide head = run.head;
	head.nodelist_len = static_cast<__u32>(run.nodelist.size());
	head.frame_len = static_cast<__u32>(frame.size());
	const std::string bytes = run.nodelist + frame;
	proto::Typed<gos_rep_jobwide> out;
	proto::Reply r = ask_daemon(socket, [&](proto::Client &c) {
		out = c.jobwide_part(head, reinterpret_cast<const __u8 *>(bytes.data()), bytes.size());
		return proto::Reply(out);
	});
	static_cast<proto::Reply &>(out) = r;
	return out;
}

// The uid of the daemon at SOCKET (SO_PEERCRED), the one user besides root
// a part is sealed for; asked on a connection of its own, which sends
// nothing, so that munged's time never counts against the daemon's wait
// for a request.
std::optional<uid_t> daemon_uid(const std::string &socket)
{
	std::optional<uid_t> uid;
	ask_daemon(socket, [&](proto::Client &c) {
		uid = c.peer_uid();
		return proto::Reply{};
	});
	return uid;
}

// The daemon's refusal, in slurmd's log: a daemon that does not run, or
// that never saw the job, at debug (not ours here); anything else an error.
void not_taken(std::uint64_t job, const proto::Reply &r)
{
	const auto id = static_cast<unsigned long>(job);
	if (r.status == -ENOTCONN || r.status == -ENOENT)
		slurm_debug("[gpuoversub] job %lu: no job-wide part: %s", id, r.error.c_str());
	else
		slurm_error("[gpuoversub] job %lu: the job-wide part not taken: %s", id, r.error.c_str());
}

// A part not sealed, in one line of slurmd's log. munged's failure comes
// with every job the node ends while munged is away, so it says where the
// cure is told rather than all of it (gpuoversubd says it once at start).
void not_sealed(std::uint64_t job, const jobwide::SealFailure &f, const std::string &munge_socket)
{
	const auto id = static_cast<unsigned long>(job);
	if (!f.by_munged)
		slurm_error("[gpuoversub] job %lu: no job-wide part: %s", id, f.why.c_str());
	else
		slurm_error("[gpuoversub] job %lu: no job-wide part: munged at %s (jobwide.munge_socket) did not seal it: "
			    "%s; job-wide records need munged on every node (gpuoversubd's start message, "
			    "spank_gpuoversub(8)); this node's own report is unaffected",
			    id, munge_socket.c_str(), f.why.c_str());
}

} // namespace

std::optional<EpilogRun> epilog_run(const PlugstackArgs &args, std::uint64_t job)
{
	EpilogRun run;
	gos_req_jobwide &head = run.head;
	head.job_id = job;
	head.start = static_cast<__s64>(env_number("SLURM_JOB_START_TIME"));
	head.run = static_cast<__u32>(env_number("SLURM_JOB_RESTART_COUNT"));
	head.num_nodes = static_cast<__u32>(env_number("SLURM_JOB_NUM_NODES"));
	const std::string node = env("SLURMD_NODENAME");
	run.nodelist = env("SLURM_NODELIST");
	if (!jobwide::valid_node(node) || run.nodelist.empty() || !head.num_nodes) {
		slurm_error("[gpuoversub] job %lu: no job-wide part: the epilog's environment lacks SLURMD_NODENAME, "
			    "SLURM_NODELIST or SLURM_JOB_NUM_NODES", static_cast<unsigned long>(job));
		return std::nullopt;
	}
	std::memcpy(head.node, node.data(), node.size());
	if (head.start)
		return run;
	auto r = tell(args.socket, run, "");	// Slurm 22.05: the daemon names the run it saw
	if (r.status) {
		not_taken(job, r);
		return std::nullopt;
	}
	head.start = r.value.start;
	head.run = r.value.run;
	return run;
}

void send_part(const PlugstackArgs &args, const config::Config &cfg, const EpilogRun &run,
	       const report::Report &report)
{
	const gos_req_jobwide &head = run.head;
	const auto id = static_cast<unsigned long>(head.job_id);
	jobwide::Payload p;
	p.job = static_cast<std::uint32_t>(head.job_id);
	p.run = head.run;
	p.start = head.start;
	p.node = std::string(head.node, ::strnlen(head.node, sizeof head.node));
	std::string frame;
	try {
		auto names = expand_hostlist(run.nodelist);
		p.writers.assign(names.begin(), names.begin() + std::min<std::size_t>(names.size(), 2));
		p.part = report::node_part(report, p.node, head.run).dump();
		// Sealed for the daemons' user alone (and root): the uid of the
		// daemon this node hands it to, as every node of a cluster runs it.
		if (auto failure = jobwide::seal_part(p, static_cast<int>(cfg.policy.jobwide.part_ttl_s()),
						      cfg.start.jobwide_munge_socket, frame,
						      daemon_uid(args.socket)))
			return not_sealed(head.job_id, *failure, cfg.start.jobwide_munge_socket);
	} catch (const std::exception &e) {
		slurm_error("[gpuoversub] job %lu: no job-wide part: %s", id, e.what());
		return;
	}
	if (auto r = tell(args.socket, run, frame); r.status)
		not_taken(head.job_id, r);
}

} // namespace gos::spank
