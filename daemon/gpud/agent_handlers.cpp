// An agent's requests about itself and its job.

#include "common/util/json_text.hpp"
#include "common/util/log.hpp"
#include "daemon/gpud/handlers.hpp"
#include "daemon/gpud/identity.hpp"
#include "daemon/gpud/report.hpp"

namespace gos::gpud {

namespace {

Answer too_many_ranks(std::uint64_t job, std::uint64_t cap)
{
	return {-E2BIG, "job " + std::to_string(job) + " already counts the " + std::to_string(cap) +
				" ranks max_ranks_per_job allows", {}};
}

} // namespace

// A refused hello also ends its connection, so a flood of them costs its
// sender a connection each, which the server bounds per uid; past the
// uid's budget of refusals it costs the daemon no /proc walk.
Answer AgentHandlers::hello(Session &s, const gos_req_hello &req)
{
	if (s.job)
		return {-EALREADY, "this connection already said hello", {}};	// an agent's: kept
	TokenBucket &refused = refused_hellos_.try_emplace(s.peer.uid, 32, 8).first->second;
	Answer r;
	if (refused.spent())
		r = {-EAGAIN, "uid " + std::to_string(s.peer.uid) + " had too many hellos refused; try again later", {}};
	else if ((r = admit(s, req)).status)
		refused.allow();
	r.hang_up = r.status != 0;
	return r;
}

Answer AgentHandlers::admit(Session &s, const gos_req_hello &req)
{
	// The job is the peer's, from the kernel; the pid the agent names only
	// has to be that process, in the daemon's namespace or its own.
	if (!own_pid_is(s.peer.pid, static_cast<pid_t>(req.pid)))
		return {-EPERM, "pid " + std::to_string(req.pid) + " is not the connecting process (" +
					std::to_string(s.peer.pid) + ")", {}};
	auto job = ledger_.job_of_pid(s.peer.pid);
	if (!job)
		return {-EPERM, "process " + std::to_string(s.peer.pid) +
					" is not a task of any job registered with gpuoversub on this node", {}};
	if (req.job_id && req.job_id != *job)
		return {-EPERM, "process " + std::to_string(s.peer.pid) + " belongs to job " + std::to_string(*job) +
					", not job " + std::to_string(req.job_id), {}};
	Job &j = ledger_.at(*job);
	if (s.peer.uid != j.uid)
		return {-EPERM, "process " + std::to_string(s.peer.pid) + " runs as uid " + std::to_string(s.peer.uid) +
					", but job " + std::to_string(*job) + " is uid " + std::to_string(j.uid) + "'s", {}};
	if (!j.agent_joins(cfg_.policy.max_agents_per_job))
		return {-EUSERS, "job " + std::to_string(*job) + " already has the " + std::to_string(cfg_.policy.max_agents_per_job) +
					 " connected processes max_agents_per_job allows", {}};
	// Listed in the report from now on: a task that says hello again and
	// again under new ranks is bounded as RANK is.
	if (!j.rank(req.rank, s.peer.pid, cfg_.policy.max_ranks_per_job)) {
		j.agent_left();
		return too_many_ranks(*job, cfg_.policy.max_ranks_per_job);
	}
	std::uint32_t client = 0;
	if (int err = engine_site_.connect(s.id, client)) {
		j.agent_left();
		return {err, "engine: " + errno_text(err), {}};
	}
	s.job = *job;
	s.rank = req.rank;
	gos_rep_hello rep{};
	rep.job_id = *job;
	rep.client = client;
	rep.ngpus = static_cast<std::uint32_t>(j.gpus.size());
	rep.chunk_size = engine_.chunk_size();
	rep.flags = engine_site_.hello_flags();
	GOS_LOG_LIMITED(j.log_budget, log::info, "job " << *job << ": agent pid " << s.peer.pid << " rank " << req.rank << " connected");
	return {0, {}, raw(rep)};
}

Answer AgentHandlers::rank(Session &s, const gos_req_rank &req)
{
	if (req.rank < 0 || req.local_rank < 0 || static_cast<std::uint32_t>(req.rank) >= req.world_size ||
	    static_cast<std::uint32_t>(req.local_rank) >= req.world_size || req.pad || !proto::printable_name(req.node))
		return {-EINVAL, "a rank needs 0 <= rank, local rank < world size and a NUL-terminated node name "
				 "of valid UTF-8 without control characters", {}};
	Job &job = ledger_.at(s.job);
	// Counted so far under the old rank; from now on under the new one.
	if (!job.rank(req.rank, s.peer.pid, cfg_.policy.max_ranks_per_job))
		return too_many_ranks(s.job, cfg_.policy.max_ranks_per_job);
	s.rank = req.rank;
	GOS_LOG_LIMITED(job.log_budget, log::info, "job " << s.job << ": pid " << s.peer.pid << " is MPI rank " << req.rank << " of "
				  << req.world_size << " (local " << req.local_rank << ") on " << req.node);
	return {0, {}, {}};
}

// Rank 0's gather at MPI_Finalize: records for the job's report.
Answer AgentHandlers::rank_report(Session &s, const gos_req_rank_report &head,
				 std::span<const gos_rank_record> records)
{
	if (head.count != records.size() || head.pad)
		return {-EINVAL, "a rank report holds 1 to " + std::to_string(GOS_RANK_REPORT_MAX) +
					 " records, exactly as many as it says", {}};
	for (const auto &r : records)
		if (r.rank < 0 || !proto::printable_name(r.node))
			return {-EINVAL, "a rank record needs a rank >= 0 and a NUL-terminated node name of valid UTF-8 "
					 "without control characters", {}};
	Job &job = ledger_.at(s.job);
	std::uint64_t omitted = 0;
	for (const auto &r : records)
		omitted += !job.keep_mpi_rank(MpiRank{r.rank, r.local_rank, r.managed != 0, static_cast<pid_t>(r.pid), r.node,
						      r.device_bytes, r.host_bytes, r.evictions, r.returns, r.bytes_evicted,
						      r.bytes_returned, r.advice, r.pinned_bytes, r.exchanges},
					      cfg_.policy.max_ranks_per_job);
	// Saved at the next checkpoint, or at once if the job ends first: a
	// frame never costs the loop a write of the whole list.
	job.mpi_ranks_unsaved = true;
	if (omitted)
		return {-E2BIG, std::to_string(omitted) + " rank record(s) not kept: the report lists at most the " +
					std::to_string(cfg_.policy.max_ranks_per_job) + " ranks max_ranks_per_job allows", {}};
	return {0, {}, {}};
}

Answer AgentHandlers::activity(Session &s, const gos_req_activity &req)
{
	Job &job = ledger_.at(s.job);
	if (req.gpu >= job.gpus.size())
		return {-EINVAL, "not one of the job's GPUs", {}};
	job.gpus[req.gpu].launches += req.launches;
	job.gpus[req.gpu].reports_activity = true;
	return {};
}

Answer AgentHandlers::meminfo(Session &s, const gos_req_meminfo &req)
{
	const Job &job = ledger_.at(s.job);
	if (req.gpu >= job.gpus.size() || req.pad)
		return {-EINVAL, "not one of the job's GPUs", {}};
	gos_tenant_stats ts{};
	gos_gpu_stats gs{};
	if (int err = engine_.tenant_stats(job.gpus[req.gpu].tenant, ts))
		return {err, "engine: " + errno_text(err), {}};
	if (int err = engine_.gpu_stats(job.gpus[req.gpu].node_gpu, gs))
		return {err, "engine: " + errno_text(err), {}};
	gos_rep_meminfo rep{};
	// A job without a limit of its own sees the GPU (its tenant's limit,
	// capacity times the ceiling, only bounds what it may ask for).
	bool own_limit = job.size_limit || job.factor_milli;
	rep.allowed = own_limit && ts.limit ? ts.limit : gs.capacity;
	rep.used = ts.demand;
	rep.entitlement = ts.entitlement;
	rep.device_bytes = ts.resident;
	rep.host_bytes = ts.host;
	rep.numa_node = gpus_[job.gpus[req.gpu].node_gpu].numa_node;
	return {0, {}, raw(rep)};
}

// The report so far of the agent's job, by the same rule as REPORT.
Answer AgentHandlers::stats(Session &s)
{
	const Job &job = ledger_.at(s.job);
	if (!may_read_job(s.peer, job.uid))
		return {-EACCES, "job " + std::to_string(job.id) + " belongs to another user", {}};
	return {0, {}, json_text(build_report(ledger_.folded(job), {}, gpus_))};
}

} // namespace gos::gpud
