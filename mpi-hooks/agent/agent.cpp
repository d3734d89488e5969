// The composition: how the parts meet, the public API's side, and fork.
#include "agent.hpp"

#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>

#include "request_count.hpp"
#include "settings.hpp"

namespace gos::agent {

Agent &Agent::get()
{
	static Agent *agent = new Agent;	// never destroyed: see agent.hpp
	return *agent;
}

Agent::Agent()
{
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

// True when the engine is there to ask. The agent's thread runs from the
// first try on, to relink when the daemon comes (back).
bool Agent::link()
{
	if (link_.connected())
		return true;
	executor_.start();
	bool linked_now = false;
	if (!link_.ensure(&linked_now))
		return false;
	if (linked_now)
		register_waiting(link_, placement_, registry_);
	return true;
}

// CUDA_SUCCESS, or the refusal when GPUOVERSUB_REQUIRED=1 and the engine
// is not there.
CUresult Agent::require_engine(const char *what, std::size_t size)
{
	if (link() || !settings().required)
		return CUDA_SUCCESS;
	warn(std::string("GPUOVERSUB_REQUIRED=1 and the engine is not available: refusing ") + what + " of " +
	     std::to_string(size) + " bytes");
	return CUDA_ERROR_NOT_PERMITTED;
}

int Agent::set_priority(std::uint64_t ptr, std::uint64_t len, std::uint32_t prio)
{
	if (prio > GPUOVERSUB_PRIORITY_MAX || !len)
		return -EINVAL;
	BufferRef b = registry_.containing(ptr);
	if (!b)
		return -ENOENT;
	std::uint64_t offset = ptr - b->base;
	if (len > b->size - offset)
		return -EINVAL;
	return link_.set_priority(*b, offset, len, prio);
}

int Agent::set_priority_of_buffer(std::uint64_t ptr, std::uint32_t prio)
{
	BufferRef b = registry_.containing(ptr);
	return b ? set_priority(b->base, b->size, prio) : -ENOENT;
}

// Callers built against an older header pass a smaller struct: they get
// the fields they know, and size says how many bytes were filled.
int Agent::stats(gpuoversub_usage &caller)
{
	constexpr std::size_t first_version = offsetof(gpuoversub_usage, headroom);
	if (caller.size < first_version)
		return -EINVAL;
	gpuoversub_usage out{};
	out.size = static_cast<std::uint32_t>(std::min<std::size_t>(caller.size, sizeof out));
	out.buffers = registry_.all().size();
	OrderExecutor::Moved moved = executor_.moved();
	out.evictions = moved.evictions;
	out.returns = moved.returns;
	out.bytes_evicted = moved.bytes_evicted;
	out.bytes_returned = moved.bytes_returned;
	out.advice = advice_.seen();
	out.pinned_bytes = advice_.pinned_bytes();
	auto daemon = link_.daemon();
	out.managed = daemon && link_.connected() ? 1 : 0;
	// The job's figures on the GPUs this process uses (an MPI rank's own
	// GPU), or on all of the job's if it holds nothing yet.
	std::vector<bool> used = registry_.gpus_in_use(link_.ngpus());
	bool any = std::find(used.begin(), used.end(), true) != used.end();
	for (std::uint32_t gpu = 0; daemon && gpu < used.size(); gpu++) {
		gos_rep_meminfo info{};
		if ((any && !used[gpu]) || daemon->meminfo(gpu, info))
			continue;
		out.device_bytes += info.device_bytes;
		out.host_bytes += info.host_bytes;
		out.allowed += info.allowed;
		out.entitlement += info.entitlement;
		out.headroom += headroom(info);
	}
	// Counted after the calls above, so that a caller's two readings
	// differ by what it did in between.
	RequestCount requests = thread_requests();
	out.daemon_requests = requests.sent;
	out.daemon_waits = requests.waited;
	std::memcpy(&caller, &out, out.size);
	return 0;
}

int Agent::set_rank(int rank, int local_rank, int world_size, const char *node)
{
	if (int err = ranks_.set(rank, local_rank, world_size, node))
		return err;
	bool was_linked = link_.connected();
	link();	// a new link sends the rank itself
	if (auto daemon = link_.daemon(); daemon && was_linked)
		ranks_.tell(*daemon);
	return 0;
}

// Rank 0's gathered breakdown at MPI_Finalize.
int Agent::report_ranks(const gos_rank_record *records, std::size_t count)
{
	if (!records || !count)
		return -EINVAL;
	auto daemon = link_.daemon();
	if (!daemon)
		return -ENOTCONN;
	int err = daemon->rank_report(records, count);
	if (err && err != -ENOTCONN)
		warn("gpuoversubd did not take the job's per-rank breakdown: " + daemon->error());
	return err;
}

// Every lock of every part is held across fork(), taken in lock order, so
// that the child's copies are free and consistent.
void Agent::before_fork()
{
	for (ForkSafe *part : get().fork_order_)
		part->fork_prepare();
}

void Agent::after_fork_parent()
{
	const auto &parts = get().fork_order_;
	std::for_each(parts.rbegin(), parts.rend(), [](ForkSafe *part) { part->fork_parent(); });
}

// The child shares its parent's socket and CUDA state, neither of which it
// may use: each part drops its share and the child links anew if it ever
// allocates.
void Agent::after_fork_child()
{
	const auto &parts = get().fork_order_;
	std::for_each(parts.rbegin(), parts.rend(), [](ForkSafe *part) { part->fork_child(); });
}

} // namespace gos::agent
