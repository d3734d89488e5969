// Steps, tasks and job ends from the SPANK plugin.
#include <algorithm>
#include <set>

#include "common/util/log.hpp"
#include "daemon/gpud/handlers.hpp"
#include "daemon/gpud/identity.hpp"

namespace gos::gpud {
namespace {

Reply no_step(std::uint64_t job, std::uint32_t step)
{
	return {-ENOENT, "no step " + std::to_string(step) + " of job " + std::to_string(job), {}};
}

} // namespace

Reply SlurmHandlers::step_register(Session &, const proto::Frame &f)
{
	gos_req_step req;
	if (auto why = proto::decode(f, req))
		return {-EINVAL, *why, {}};
	if (!req.job_id)
		return {-EINVAL, "job id 0", {}};
	if (!req.ngpus || req.ngpus > GOS_MAX_STEP_GPUS)
		return {-EINVAL, "a step needs 1 to " + std::to_string(GOS_MAX_STEP_GPUS) + " GPUs", {}};
	if (!proto::printable_name(req.partition) || !proto::printable_name(req.account) ||
	    !proto::printable_name(req.qos) || !proto::printable_name(req.shards_reason))
		return {-EINVAL, "partition, account, QOS name or shards reason not terminated, or with a control character", {}};
	std::set<std::uint32_t> seen;
	for (std::uint32_t i = 0; i < req.ngpus; i++) {
		if (req.gpus[i] >= gpus_.size())
			return {-EINVAL, "GPU " + std::to_string(req.gpus[i]) + " does not exist on this node (it has " +
						 std::to_string(gpus_.size()) + ")", {}};
		if (!seen.insert(req.gpus[i]).second)
			return {-EINVAL, "GPU " + std::to_string(req.gpus[i]) + " listed twice", {}};
	}
	Job *job = ledger_.find(req.job_id);
	bool fresh = !job;
	if (fresh) {
		reconciler_.sweep();
		job = &ledger_.create(req);
		reconciler_.follow(job->id);
	}
	else if (job->uid != req.uid)
		return {-EPERM, "job " + std::to_string(req.job_id) + " is registered for another user", {}};
	else if (job->ended)
		return {-EBUSY, "job " + std::to_string(req.job_id) + " ended and its report is still pending", {}};
	for (std::uint32_t i = 0; i < req.ngpus; i++)
		if (std::none_of(job->gpus.begin(), job->gpus.end(), [&](auto &g) { return g.node_gpu == req.gpus[i]; })) {
			JobGpu g;
			g.node_gpu = req.gpus[i];
			g.shards = {req.shards_held[i], req.shards_total[i], req.shards_reason};
			if (g.shards.reason.empty() && g.shards.held > g.shards.total)
				g.shards.reason = "the plugin sent " + std::to_string(g.shards.held) + " of " +
						  std::to_string(g.shards.total) + " shards";
			job->gpus.push_back(g);
		}
	bool new_step = job->steps.insert(req.step_id).second;
	// A job the daemon could not save would be lost by a restart: the
	// plugin hears so now, rather than success.
	if (auto why = ledger_.admit(*job); !why.empty()) {
		std::uint64_t id = job->id;
		if (fresh)
			ledger_.discard(id);
		else if (new_step)
			job->steps.erase(req.step_id);
		return {-EIO, "job " + std::to_string(id) + " not saved, so not registered: " + why, {}};
	}
	GOS_LOG(log::info, "job " << job->id << " step " << req.step_id << " registered on " << req.ngpus << " GPU(s)");
	return {};
}

Reply SlurmHandlers::step_end(Session &, const proto::Frame &f)
{
	gos_req_step_ref req;
	if (auto why = proto::decode(f, req))
		return {-EINVAL, *why, {}};
	Job *job = ledger_.find_step(req.job_id, req.step_id);
	if (!job)
		return no_step(req.job_id, req.step_id);
	ledger_.forget_tasks(*job, req.step_id);
	job->steps.erase(req.step_id);
	if (job->steps.empty())
		ledger_.end(job->id);
	else
		ledger_.save(*job);
	return {};
}

// The epilog's word that the job is over, whatever steps did not say so
// (a slurmstepd killed before its exit hook). Said again (an epilog run
// twice, a retry after a crash), it is answered success.
Reply SlurmHandlers::job_end(Session &, const proto::Frame &f)
{
	gos_req_job req;
	if (auto why = proto::decode(f, req))
		return {-EINVAL, *why, {}};
	Job *job = ledger_.find(req.job_id);
	if (!job && ledger_.reported(req.job_id))
		return {};
	if (!job)
		return {-ENOENT, "job " + std::to_string(req.job_id) + " is not registered on this node", {}};
	if (job->ended) {
		ledger_.end(job->id);	// its report is pending: try again now
		return {};
	}
	if (!job->steps.empty())
		GOS_LOG(log::warning, "job " << req.job_id << " ended with " << job->steps.size()
					     << " step(s) that never said so");
	job->steps.clear();
	ledger_.end(job->id);
	return {};
}

Reply SlurmHandlers::task_register(Session &, const proto::Frame &f)
{
	gos_req_task req;
	if (auto why = proto::decode(f, req))
		return {-EINVAL, *why, {}};
	Job *job = ledger_.find_step(req.job_id, req.step_id);
	if (!job)
		return no_step(req.job_id, req.step_id);
	const pid_t limit = pid_max();	// pids are below it
	if (req.pid < 2 || req.pid >= static_cast<std::uint32_t>(limit))
		return {-EINVAL, "pid " + std::to_string(req.pid) + " cannot be a task: pids run from 2 to " +
					 std::to_string(limit - 1) + " (below kernel.pid_max)", {}};
	pid_t pid = static_cast<pid_t>(req.pid);
	auto now = proc_stat(pid);
	if (!now)
		return {-ESRCH, "no process " + std::to_string(pid) + " to register as a task of job " +
					std::to_string(job->id), {}};
	// What a record that cannot be saved takes back.
	auto was_tasks = job->tasks;
	auto was_registered = job->registered;
	auto was_cgroup = job->cgroup;
	ledger_.add_task(*job, pid, Task{now->start, req.step_id});
	if (!job->cgroup)
		if (auto cg = slurm_job_cgroup(pid, ledger_.slurm_cgroups()); cg && cg->job == job->id)
			job->cgroup = cg->id;
	// A task the daemon could not save would be lost by a restart: the
	// plugin hears so now, rather than success, and nothing of it stays.
	if (auto why = ledger_.save(*job); !why.empty()) {
		job->tasks = std::move(was_tasks);
		job->registered = was_registered;
		job->cgroup = was_cgroup;
		return {-EIO, "task " + std::to_string(pid) + " not saved, so not registered: " + why, {}};
	}
	if (int err = ledger_.tenants().bind(*job))
		return {err, "engine: cannot bind task " + std::to_string(pid) + " to job " + std::to_string(job->id) +
				     ": " + errno_text(err), {}};
	return {};
}

} // namespace gos::gpud
