// Steps, tasks and job ends from the SPANK plugin: each request checked,
// then decided by the ledger.
#include <chrono>
#include <cstring>
#include <ctime>
#include <set>

#include "daemon/gpud/handlers.hpp"
#include "daemon/gpud/identity.hpp"
#include "common/util/log.hpp"

namespace gos::gpud {

Answer SlurmHandlers::step_register(Session &, const gos_req_step &req)
{
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
	const bool new_job = !ledger_.find(req.job_id);
	if (new_job)
		reconciler_.sweep();
	auto refused = ledger_.register_step(req);
	if (new_job && !refused)
		reconciler_.follow(req.job_id);
	return answer_of(refused);
}

Answer SlurmHandlers::step_end(Session &, const gos_req_step_ref &req)
{
	return answer_of(ledger_.end_step(req.job_id, req.step_id));
}

// The epilog's word that the job is over, whatever steps did not say so
// (a slurmstepd killed before its exit hook).
Answer SlurmHandlers::job_end(Session &, const gos_req_job &req)
{
	// The epilog told the run's end before this: a requeued job's next
	// run must not be taken for this one.
	facts_.forget_run(req.job_id);
	return answer_of(ledger_.end_job(req.job_id));
}

Answer SlurmHandlers::task_register(Session &, const gos_req_task &req)
{
	const pid_t limit = pid_max();	// pids are below it
	if (req.pid < 2 || req.pid >= static_cast<std::uint32_t>(limit))
		return {-EINVAL, "pid " + std::to_string(req.pid) + " cannot be a task: pids run from 2 to " +
					 std::to_string(limit - 1) + " (below kernel.pid_max)", {}};
	return answer_of(ledger_.register_task(req.job_id, req.step_id, static_cast<pid_t>(req.pid)));
}

// The epilog's word that a run ended here; what it refuses is logged, for
// the epilog returns at once and says nothing more.
Answer SlurmHandlers::jobwide_part(Session &, const gos_req_jobwide &head, std::span<const __u8> bytes)
{
	if (std::size_t{head.nodelist_len} + head.frame_len != bytes.size())
		return {-EINVAL, "a run's end carries its node list, then its frame, exactly as long as its head says", {}};
	const char *at = reinterpret_cast<const char *>(bytes.data());
	RunEnd end{head.job_id,
		   head.start,
		   head.run,
		   head.num_nodes,
		   std::string(head.node, ::strnlen(head.node, sizeof head.node)),
		   std::string(at, head.nodelist_len),
		   std::string(at + head.nodelist_len, head.frame_len)};
	if (!end.start) {
		// Slurm 22.05's epilog has no start: the run is the one slurmctld
		// showed while the job ran here, start and restart count together.
		if (auto seen = facts_.run_seen(end.job); seen && seen->start > 0) {
			end.start = seen->start;
			end.run = seen->restart_cnt;
		}
	}
	std::optional<Refusal> refused =
		end.start ? jobwide_.run_end(end, std::time(nullptr), std::chrono::steady_clock::now())
			  : Refusal{-ENOENT, "no start time for job " + std::to_string(end.job) + ": the epilog gives none "
				    "(SLURM_JOB_START_TIME is Slurm 23.02's) and slurmctld's was not read while it ran here"};
	if (refused) {
		// A frameless end of a run never seen here is the 22.05 epilog
		// asking about every job, gpuoversub's or not: nothing to say
		// (issue 50, finding 6: a line for each job without the option).
		const bool asking = end.frame.empty() && refused->status == -ENOENT;
		GOS_LOG(asking ? log::debug : log::warning,
			"job-wide: job " << head.job_id << ": the epilog's run end not taken: " << refused->why);
		return answer_of(refused);
	}
	gos_rep_jobwide rep{};
	rep.start = end.start;
	rep.run = end.run;
	return {0, {}, raw(rep)};
}

} // namespace gos::gpud
