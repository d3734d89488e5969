// spank_gpuoversub.so: the SPANK hooks, dispatched by context.
//   allocator/local (sbatch, salloc, srun; the user): validate the option
//     and the admin's ceiling, refuse bad values at submit time;
//   remote (slurmstepd; root): register the step and every task with
//     gpuoversubd, put the agent in front of the tasks' LD_PRELOAD, end the
//     step at exit;
//   job_script (the epilog; root): see epilog.cpp.
// A job without the option is not touched.
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <utility>

// spank.h declares the hooks outside its extern "C". The plugin's identity
// for Slurm's loader (SPANK_PLUGIN) is in series.cpp.
extern "C" {
#include <slurm/slurm.h>
#include <slurm/spank.h>
}

#include "common/config/config.hpp"
#include "spank/daemon_calls.hpp"
#include "spank/epilog.hpp"
#include "spank/plugstack_args.hpp"
#include "spank/series.hpp"
#include "spank/shards.hpp"
#include "spank/step_env.hpp"

#ifndef GOS_AGENT_PATH
#define GOS_AGENT_PATH "/usr/local/lib/libgpuoversub.so"
#endif

#define GOS_EXPORT extern "C" __attribute__((visibility("default")))

using namespace gos::spank;
using gos::config::Request;
using gos::proto::Client;
using gos::proto::Reply;

namespace {

struct State {
	PlugstackArgs args;
	bool option_given = false;
	Request option;
	Request effective;
	bool managed = false;		// the step is registered, or will be
	bool step_registered = false;
	std::string refusal;		// on_daemon_down=fail: why each task fails
	bool off = false;		// init could not do its part: the hooks do nothing
	std::vector<gos::status::GpuStatus> node_gpus;	// the daemon's, from its STATUS at remote_post_opt
	bool named_refused = false;	// said once: the step's GPUs are not ones the daemon can name
};

State state;

int on_option(int, const char *optarg, int)
{
	std::string why;
	auto r = gos::config::parse_request(option_value(optarg), why);
	if (!r) {
		slurm_error("[gpuoversub] %s", why.c_str());
		return -1;
	}
	state.option_given = true;
	state.option = *r;
	return 0;
}

struct spank_option oversub_option = {
	const_cast<char *>("gpu-mem-oversub"), const_cast<char *>("off|FACTOR|SIZE"),
	const_cast<char *>("[gpuoversub] Share this job's GPUs with memory oversubscription: up to FACTOR times "
			   "its fair share (e.g. 2), a SIZE cap (e.g. 40G), or off. Without a value: on, no cap. "
			   "Default: $SLURM_GPU_MEM_OVERSUB."),
	2, 0, on_option};

std::string env_of(spank_t sp, const char *name)
{
	if (spank_context() != S_CTX_REMOTE) {
		const char *v = std::getenv(name);
		return v ? v : "";
	}
	char buf[4096];
	return spank_getenv(sp, name, buf, sizeof buf) == ESPANK_SUCCESS ? buf : "";
}

// The policy file, for the option's default and ceiling; none where it
// cannot be read (a submit host may have none: the node decides).
std::optional<gos::config::Policy> read_policy()
{
	if (access(state.args.config.c_str(), R_OK) != 0)
		return std::nullopt;
	try {
		return gos::config::load_config(state.args.config).policy;
	} catch (const std::exception &e) {
		slurm_debug("[gpuoversub] no default or ceiling from the policy: %s", e.what());
		return std::nullopt;
	}
}

// The option, else the environment, else the policy's default for the
// job's partition and QOS; then the policy's ceiling for them. False (after
// saying why) when the job must not run.
bool resolve(spank_t sp)
{
	auto refuse = [](const std::string &why) {
		slurm_error("[gpuoversub] %s", why.c_str());
		state.refusal = why;
		return false;
	};
	// Known in the job's steps; at submit time only the plain entries apply.
	// The environment's word, which its user may set, serves only to tell
	// the user early: the daemon applies the ceiling of slurmctld's names.
	std::string partition = env_of(sp, "SLURM_JOB_PARTITION"), qos = env_of(sp, "SLURM_JOB_QOS");
	auto policy = read_policy();
	Request r;
	std::string why;
	if (state.option_given) {
		r = state.option;
	} else if (std::string env = env_of(sp, "SLURM_GPU_MEM_OVERSUB"); !env.empty()) {
		auto parsed = gos::config::parse_request(env, why);
		if (!parsed)
			return refuse("SLURM_GPU_MEM_OVERSUB: " + why);
		r = *parsed;
	} else if (policy) {
		r = gos::config::choose(policy->default_oversub, "default_oversub", partition, qos).value;
	}
	if (r.kind == Request::Kind::factor && policy) {
		std::string message;
		auto capped = apply_ceiling(r, gos::config::choose(policy->max_oversub, "max_oversub", partition, qos),
					    policy->over_ceiling == gos::config::Ceiling::refuse, message);
		if (!capped)
			return refuse(message);
		if (!message.empty() && spank_context() != S_CTX_REMOTE)
			slurm_spank_log("[gpuoversub] %s", message.c_str());
		r = *capped;
	}
	state.effective = r;
	return true;
}

std::pair<std::uint32_t, std::uint32_t> job_and_step(spank_t sp)
{
	std::uint32_t job = 0, step = 0;
	spank_get_item(sp, S_JOB_ID, &job);
	spank_get_item(sp, S_JOB_STEPID, &step);
	return {job, step};
}

// This node's Slurm name: SLURMD_NODENAME is set only when the tasks start,
// so before that the step's (or batch job's) node list at our node index.
std::string node_name(spank_t sp)
{
	if (std::string name = env_of(sp, "SLURMD_NODENAME"); !name.empty())
		return name;
	std::string list = env_of(sp, "SLURM_STEP_NODELIST");
	if (list.empty())
		list = env_of(sp, "SLURM_JOB_NODELIST");
	std::uint32_t index = 0;
	spank_get_item(sp, S_JOB_NODEID, &index);
	auto names = hostlist_names(list);
	return index < names.size() ? names[index] : "";
}

// gres.conf beside slurmstepd's slurm.conf: each GPU's shard count.
NodeShards gres_conf_shards(spank_t sp)
{
	const char *own = std::getenv("SLURM_CONF");
	std::string conf = own ? own : env_of(sp, "SLURM_CONF");
	std::string dir = conf.rfind('/') != std::string::npos ? conf.substr(0, conf.rfind('/')) : "/etc/slurm";
	std::ifstream in(dir + "/gres.conf");
	if (!in)
		return {};	// no gres.conf: no shards configured
	return node_shards(in, node_name(sp));
}

// The node indexes of the GPUs CUDA_VISIBLE_DEVICES names by UUID, from
// the daemon's STATUS.
std::optional<std::vector<std::uint32_t>> gpus_named(const std::string &visible, std::string &why)
{
	auto gpus = gpus_by_uuid(visible, state.node_gpus);
	if (!gpus)
		why = "CUDA_VISIBLE_DEVICES=" + visible +
		      " names a GPU that gpuoversubd does not manage (gpuoversubctl status lists them by UUID)";
	return gpus;
}

// Whether a GPU of the node is a MIG instance: Slurm's GPU indexes then
// count instances in Slurm's order, which is not the daemon's.
bool node_has_mig()
{
	return std::any_of(state.node_gpus.begin(), state.node_gpus.end(),
			   [](const gos::status::GpuStatus &g) { return !g.mig_parent.empty(); });
}

// Registers the step once its GPUs are known. Idempotent in the daemon.
// Slurm sets the step's CUDA_VISIBLE_DEVICES before the plugin's first
// hook (slurmstepd.c), so a step named by UUID is registered at once.
void register_step(spank_t sp)
{
	if (state.step_registered)
		return;
	std::string list = env_of(sp, "CUDA_VISIBLE_DEVICES");
	std::optional<std::vector<std::uint32_t>> gpus;
	std::string why;
	if (names_by_uuid(list)) {
		gpus = gpus_named(list, why);
	} else {
		list = env_of(sp, "SLURM_STEP_GPUS");
		if (list.empty())
			list = env_of(sp, "SLURM_JOB_GPUS");
		if (list.empty())
			list = env_of(sp, "CUDA_VISIBLE_DEVICES");
		if (!(gpus = parse_gpu_list(list)))
			return;	// not known yet, or no GPUs
		if (node_has_mig()) {
			gpus.reset();
			why = "this node has MIG instances, and the step's GPUs come as Slurm's indexes (" + list +
			      "), not by UUID in CUDA_VISIBLE_DEVICES (gres.conf AutoDetect=nvml writes them)";
		}
	}
	if (!gpus) {
		if (!state.named_refused) {	// said once, not by every task
			state.named_refused = true;
			auto [job, step] = job_and_step(sp);
			slurm_error("[gpuoversub] job %u step %u: not registered: %s", job, step, why.c_str());
		}
		return;
	}
	gos_req_step req{};
	auto [job, step] = job_and_step(sp);
	uid_t uid = 0;
	spank_get_item(sp, S_JOB_UID, &uid);
	req.job_id = job;
	req.step_id = step;
	req.uid = uid;
	for (auto g : *gpus)
		if (req.ngpus < GOS_MAX_STEP_GPUS)
			req.gpus[req.ngpus++] = g;
	req.factor_milli = state.effective.factor_milli();
	req.size_limit = state.effective.kind == Request::Kind::size ? state.effective.size : 0;
	// No partition, account or QOS: Slurm 22.05 gives a plugin none of them
	// but through the job's environment, which its user may set. The daemon
	// asks slurmctld, and weighs the job by the policy's plain entries until
	// it has answered.
	StepShards shards = step_shards(env_of(sp, "SLURM_SHARDS_ON_NODE"), req.ngpus, gres_conf_shards(sp));
	for (std::uint32_t i = 0; i < req.ngpus; i++) {
		req.shards_held[i] = shards.held;
		req.shards_total[i] = shards.total;
	}
	std::snprintf(req.shards_reason, sizeof req.shards_reason, "%s", shards.reason.c_str());
	if (!shards.reason.empty())
		slurm_info("[gpuoversub] job %u: shards unknown, weight 1: %s", job, shards.reason.c_str());
	Reply o = ask_daemon(state.args.socket, [&](Client &c) { return c.step_register(req); });
	if (o.status) {
		slurm_error("[gpuoversub] job %u step %u: gpuoversubd did not register the step: %s", job, step,
			    o.error.c_str());
		return;
	}
	state.step_registered = true;
	slurm_debug("[gpuoversub] job %u step %u registered on GPU(s) %s with --gpu-mem-oversub=%s", job, step,
		    list.c_str(), state.effective.text().c_str());
}

int remote_post_opt(spank_t sp)
{
	if (!resolve(sp))
		return 0;	// each task fails (task_init): failing here would drain the node
	if (!state.effective.enabled())
		return 0;
	Reply o = ask_daemon(state.args.socket, [](Client &c) { return c.status(); });
	if (o.status) {
		if (state.args.fail_when_daemon_down) {
			// Failing here would fail the launch and drain the node;
			// each task fails instead (task_init).
			state.refusal = "the job asked for --gpu-mem-oversub, but gpuoversubd is not reachable (" +
					o.error + "), and this cluster's policy is to fail such jobs (on_daemon_down=fail)";
			slurm_error("[gpuoversub] %s", state.refusal.c_str());
			return 0;
		}
		slurm_info("[gpuoversub] gpuoversubd is not reachable (%s); the step runs without memory "
			   "oversubscription (on_daemon_down=passthrough)", o.error.c_str());
		return 0;
	}
	state.managed = true;
	try {
		state.node_gpus = nlohmann::json::parse(o.body.begin(), o.body.end()).get<gos::status::Status>().gpus;
	} catch (const nlohmann::json::exception &e) {
		slurm_error("[gpuoversub] gpuoversubd's status is not one this plugin reads (%s); GPUs named by UUID "
			    "are not found", e.what());
	}
	register_step(sp);
	return 0;
}

int remote_user_init(spank_t sp)
{
	if (!state.managed)
		return 0;
	if (access(state.args.agent.c_str(), R_OK) != 0) {
		slurm_error("[gpuoversub] the agent %s is missing; the step runs without it", state.args.agent.c_str());
		return 0;
	}
	std::vector<std::string> libs = {state.args.agent};
	bool mpi = !env_of(sp, "SLURM_MPI_TYPE").empty() || !env_of(sp, "OMPI_COMM_WORLD_SIZE").empty() ||
		   !env_of(sp, "PMIX_RANK").empty();
	bool hooks_there = access(state.args.mpi_hooks_lib.c_str(), R_OK) == 0;
	if (state.args.mpi_hooks == MpiHooks::always && !hooks_there)
		slurm_error("[gpuoversub] mpi_hooks=always, but %s is missing", state.args.mpi_hooks_lib.c_str());
	if (hooks_there && (state.args.mpi_hooks == MpiHooks::always ||
			    (state.args.mpi_hooks == MpiHooks::automatic && mpi)))
		libs.push_back(state.args.mpi_hooks_lib);
	std::string preload = preload_with(env_of(sp, "LD_PRELOAD"), libs);
	if (spank_setenv(sp, "LD_PRELOAD", preload.c_str(), 1) != ESPANK_SUCCESS ||
	    spank_setenv(sp, "GPUOVERSUB_SOCKET", state.args.socket.c_str(), 1) != ESPANK_SUCCESS)
		slurm_error("[gpuoversub] cannot set the tasks' environment; the step runs without the agent");
	return 0;
}

// In each task, after fork and before exec, still root: the task is known
// to the daemon before it can allocate anything.
int remote_task_privileged(spank_t sp)
{
	if (!state.managed)
		return 0;
	register_step(sp);
	auto [job, step] = job_and_step(sp);
	gos_req_task t{job, step, static_cast<std::uint32_t>(getpid())};
	Reply o = ask_daemon(state.args.socket, [&](Client &c) { return c.task_register(t); });
	if (o.status)
		slurm_error("[gpuoversub] job %u: task %u not registered: %s", job, t.pid, o.error.c_str());
	return 0;
}

int remote_exit(spank_t sp)
{
	if (!state.managed)
		return 0;
	auto [job, step] = job_and_step(sp);
	gos_req_step_ref ref{job, step, 0};
	Reply o = ask_daemon(state.args.socket, [&](Client &c) { return c.step_end(ref); });
	if (o.status && o.status != -ENOENT)
		slurm_error("[gpuoversub] job %u step %u: ending the step: %s", job, step, o.error.c_str());
	return 0;
}

// What each hook does for this job or command, and for whom it is off.
const char *off_for()
{
	return spank_context() == S_CTX_REMOTE ? "job, which runs without it" : "command";
}

// A hook's body, whose exception (memory, a case no one foresaw) would
// abort slurmstepd and drain the node: logged, and gpuoversub is off for
// the rest of the job.
template <class Body>
int guarded(const char *hook, Body body) noexcept
{
	try {
		return body();
	} catch (const std::exception &e) {
		slurm_error("[gpuoversub] %s: %s; gpuoversub is off for this %s", hook, e.what(), off_for());
	} catch (...) {
		slurm_error("[gpuoversub] %s failed; gpuoversub is off for this %s", hook, off_for());
	}
	state.off = true;
	return 0;
}

} // namespace

// Each hook first: built for another Slurm series, the plugin does nothing
// (series.hpp).
//
// Init never fails: a required plugin's failed init drains the node under
// Slurm's default (spank(8)), and fails the launch before 25.05. What goes
// wrong here turns gpuoversub off for this job or command, which runs
// without it, and says why. Where Slurm lets a plugin say so, a failure
// would fail the job, never the node.
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0)
// (spank.h declares it, extern "C")
__attribute__((visibility("default"))) int slurm_spank_init_failure_mode = ESPANK_JOB_FAILURE;
#endif

GOS_EXPORT int slurm_spank_init(spank_t sp, int ac, char *av[])
{
	if (other_series())
		return other_series_init(sp, oversub_option);
	state = State{};
	return guarded("init", [&] {
		state.args = parse_plugstack_args(ac, av, GOS_AGENT_PATH);
		for (const auto &e : state.args.errors)
			slurm_error("[gpuoversub] %s", e.c_str());
		if (spank_context() == S_CTX_SLURMD)
			return 0;
		if (spank_option_register(sp, &oversub_option) != ESPANK_SUCCESS) {
			slurm_error("[gpuoversub] Slurm refused the option --gpu-mem-oversub; gpuoversub is off for this %s",
				    off_for());
			state.off = true;
		}
		return 0;
	});
}

GOS_EXPORT int slurm_spank_init_post_opt(spank_t sp, int, char *[])
{
	if (other_series())
		return other_series_post_opt();
	if (state.off)
		return 0;
	return guarded("init_post_opt", [&] {
		switch (spank_context()) {
		case S_CTX_ALLOCATOR:
		case S_CTX_LOCAL: return resolve(sp) ? 0 : -1;
		case S_CTX_REMOTE: return remote_post_opt(sp);
		default: return 0;
		}
	});
}

GOS_EXPORT int slurm_spank_user_init(spank_t sp, int, char *[])
{
	if (other_series() || state.off || spank_context() != S_CTX_REMOTE)
		return 0;
	return guarded("user_init", [&] { return remote_user_init(sp); });
}

GOS_EXPORT int slurm_spank_task_init_privileged(spank_t sp, int, char *[])
{
	if (other_series() || state.off || spank_context() != S_CTX_REMOTE)
		return 0;
	return guarded("task_init_privileged", [&] { return remote_task_privileged(sp); });
}

// In each task, as the user, just before exec.
GOS_EXPORT int slurm_spank_task_init(spank_t, int, char *[])
{
	if (other_series() || state.off)
		return 0;
	if (spank_context() != S_CTX_REMOTE || state.refusal.empty())
		return 0;
	std::fprintf(stderr, "gpuoversub: %s\n", state.refusal.c_str());
	return -1;
}

GOS_EXPORT int slurm_spank_exit(spank_t sp, int, char *[])
{
	if (other_series() || state.off || spank_context() != S_CTX_REMOTE)
		return 0;
	return guarded("exit", [&] { return remote_exit(sp); });
}

// Slurm calls no init in the epilog's process: the arguments come here.
GOS_EXPORT int slurm_spank_job_epilog(spank_t sp, int ac, char *av[])
{
	if (other_series())
		return 0;
	guarded("job_epilog", [&] {
		PlugstackArgs args = parse_plugstack_args(ac, av, GOS_AGENT_PATH);
		for (const auto &e : args.errors)
			slurm_error("[gpuoversub] %s", e.c_str());
		// slurmd hands the epilog the job's SPANK options (its SPANK_
		// environment), which only the job's own submission can set.
		char *factor = nullptr;
		report_job_end(args, spank_option_getopt(sp, &oversub_option, &factor) == ESPANK_SUCCESS);
		return 0;
	});
	return 0;	// never non-zero: that would drain the node
}
