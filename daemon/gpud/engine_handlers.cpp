// An agent's engine calls, when the engine is the daemon's own.
#include <chrono>

#include "common/util/units.hpp"
#include "daemon/gpud/handlers.hpp"

namespace gos::gpud {

Answer EngineHandlers::alloc(Session &s, const gos_req_alloc &req)
{
	Job &job = ledger_.at(s.job);
	if (req.gpu >= job.gpus.size())
		return {-EINVAL, "GPU " + std::to_string(req.gpu) + " is not one of the job's " +
					 std::to_string(job.gpus.size()) + " GPU(s)", {}};
	std::uint32_t flags;
	if (gos_alloc_flags_of_wire(req.flags, &flags) || req.pad)
		return {-EINVAL, "unknown allocation flags", {}};
	// A buffer registered again after a restart was counted when it was made;
	// a job that began after this daemon started has none to register again,
	// so AGAIN does not hide its allocations from its report.
	bool again = (flags & GOS_ALLOC_AGAIN) && job.resumed;
	if (!again)
		flags &= ~GOS_ALLOC_AGAIN;
	auto start = std::chrono::steady_clock::now();
	std::uint32_t client = orders_.client_of(s.id);
	gos_alloc_result res{};
	int err = engine_.alloc(client, job.gpus[req.gpu].tenant, req.size, req.priority, flags, res);
	if (err == -EDQUOT && job.gpus[req.gpu].held_at)
		return {err, "job " + std::to_string(job.id) + " let orders to give back memory expire unanswered; its new "
			     "allocations on this GPU are refused until its processes answer (on_unresponsive: refuse)", {}};
	if (err == -EDQUOT)
		return {err, "the job's GPU memory limit would be exceeded (without a limit of its own, a job may hold "
			     "the GPU's capacity times max_oversub)", {}};
	if (err == -EFBIG)
		return {err, "one buffer of " + format_bytes(req.size) + " is more chunks of chunk_size than the engine counts", {}};
	if (err == -ENOBUFS)	// the engine's cap, which the policy sets
		return {err, "job " + std::to_string(job.id) + " holds the most buffers on its GPU " + std::to_string(req.gpu) +
				     " that max_buffers_per_job (" + std::to_string(cfg_.policy.max_buffers_per_job) + ") allows", {}};
	if (err == -ENOSPC)
		return {err, "the job's unevictable memory would exceed its share of the GPU", {}};
	if (err)
		return {err, "allocation refused: " + errno_text(err), {}};
	std::uint64_t spill_limit = cfg_.policy.host_spill_limit;
	if (spill_limit && res.host_bytes && ledger_.tenants().host_bytes() > spill_limit) {
		engine_.free(client, res.buffer);
		return {-ENOMEM, "the node's host-RAM spill limit of " + format_bytes(spill_limit) + " is reached", {}};
	}
	if (!again) {
		job.latency.add(static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
			std::chrono::steady_clock::now() - start).count()));
		if (RankStats *counters = job.counters(s.rank, s.peer.pid)) {
			counters->allocs++;
			counters->bytes_allocated += req.size;
		}
	}
	gos_rep_alloc rep{};
	rep.buffer = res.buffer;
	rep.device_bytes = res.device_bytes;
	rep.host_bytes = res.host_bytes;
	rep.waiting_bytes = res.waiting_bytes;
	rep.numa_node = gpus_[job.gpus[req.gpu].node_gpu].numa_node;
	rep.layout = GOS_ALLOC_IN_ORDER;	// the engine's layout (gos_alloc_result): the agent asks no more
	return {0, {}, raw(rep)};
}

Answer EngineHandlers::free_buffer(Session &s, const gos_req_buffer &req)
{
	int err = engine_.free(orders_.client_of(s.id), req.buffer);
	return {err, err ? "no such buffer of this process" : "", {}};
}

Answer EngineHandlers::set_priority(Session &s, const gos_req_priority &req)
{
	int err = engine_.set_priority(orders_.client_of(s.id), req.buffer, req.offset, req.length, req.priority);
	return {err, err == -ENOENT ? "no such buffer of this process" : err ? "bad range or priority (0 to 15)" : "", {}};
}

Answer EngineHandlers::order_done(Session &s, const gos_req_order_done &req)
{
	int err = orders_.done(s, req.order, req.ok != 0);
	return {err, err ? "no such order outstanding (expired, or its buffer was freed): restore the placement "
			   "the daemon last gave": "", {}};
}

Answer EngineHandlers::placement(Session &s, const gos_req_placement &req)
{
	if (!req.count || req.count > GOS_PLACEMENT_MAX)
		return {-EINVAL, "ask for 1 to " + std::to_string(GOS_PLACEMENT_MAX) + " chunks", {}};
	std::string states(req.count, '\0');
	int err = engine_.placement(orders_.client_of(s.id), req.buffer, req.first, req.count,
				    reinterpret_cast<std::uint8_t *>(states.data()));
	if (err == -ENOENT)
		return {err, "no such buffer of this process", {}};
	if (err)
		return {err, "chunks " + std::to_string(req.first) + " + " + std::to_string(req.count) +
				     " are not all in the buffer", {}};
	return {0, {}, std::move(states)};
}

} // namespace gos::gpud
