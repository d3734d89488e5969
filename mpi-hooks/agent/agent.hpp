// The agent of one process: a thin composition of its parts, which the
// hooks and the public API call into. The one instance is never destroyed
// (applications may allocate from atexit handlers).
//
// Parts, each with its own state and lock (its header says what the lock
// guards); the Agent itself holds neither:
//   Registry       every buffer the process allocated, by address, handle, engine id
//   RankFacts      the process's MPI rank
//   Link           the engine's and the daemon's calls (EngineCalls,
//                  DaemonCalls), connecting, registration, loss
//   Placement      advise + prefetch on a private stream per context
//   Advice         the application's callback, pinning, advice counters
//   DeferredFrees  buffers freed on a stream, freed when it gets there
//   PoolBook       the application's memory pools, which of them are replaceable
//   OrderExecutor  the agent's thread: the order queue, batches, activity
//   Lanes          the executor's workers, one stream each (inside OrderExecutor)
//   Reserve        device-resident blocks kept ready for allocations
//
// Lock order: a thread holding one of these takes only those further down.
//   1. Advice::mu_         the application's advice callback runs under it
//   2. Link::mu_           connecting; the hello runs under it
//   3. Buffer::op          one at a time, but for the executor's batch
//   4. the leaves, never nested: Link::client_mu_, Registry::mu_,
//      OrderExecutor::mu_ (then Lanes::mu_, at fork only), Placement::mu_,
//      DeferredFrees::mu_, RankFacts::mu_, PoolBook::mu_, Reserve::mu_
// The clients' own locks (DaemonClient's, KernelClient's, proto::Client's)
// come after all of these, and their reader threads take none of these but
// OrderExecutor::mu_ (orders, a lost connection). Driver
// calls made under any of them never come back into the agent: the hooks
// pass straight through under Reentry (reentry.hpp). Fork: before_fork
// takes Link's locks, then the leaves (fork_safe.hpp); not Buffer::op (the
// child abandons its parent's buffers) nor Advice::mu_ (a callback may fork).
#pragma once

#include <array>
#include <cstdint>

#include <gpuoversub/gpuoversub.h>

#include "advice.hpp"
#include "cuda_api.hpp"
#include "executor.hpp"
#include "frees.hpp"
#include "link.hpp"
#include "placement.hpp"
#include "pools.hpp"
#include "ranks.hpp"
#include "registry.hpp"
#include "reserve.hpp"

namespace gos::agent {

// How an allocation hook wants its memory.
enum class Want {
	evictable,	// managed memory the engine may move
	app_managed,	// the application asked for managed memory itself
	pinned,		// counted, stays on the device
};

class Agent final : private LinkEvents {
public:
	static Agent &get();

	// Allocation paths (allocations.cpp); they return what the driver or
	// the policy says.
	CUresult allocate(CUdeviceptr *dptr, std::size_t size, Want want, unsigned managed_flags = 0);
	CUresult allocate_async(CUdeviceptr *dptr, std::size_t size, CUstream stream, CUmemoryPool pool,
				bool per_thread);
	CUresult release(CUdeviceptr dptr);
	CUresult release_async(CUdeviceptr dptr, CUstream stream, bool per_thread);
	CUresult vmm_create(CUmemGenericAllocationHandle *handle, std::size_t size, const CUmemAllocationProp *prop,
			    unsigned long long flags);
	CUresult vmm_release(CUmemGenericAllocationHandle handle);
	CUresult mem_info(std::size_t *free_bytes, std::size_t *total_bytes);
	CUresult pool_create(CUmemoryPool *pool, const CUmemPoolProps *props);
	CUresult ipc_handle(CUipcMemHandle *handle, CUdeviceptr dptr);

	static void count_launch() { OrderExecutor::count_launch(); }

	// Public API (gpuoversub.h).
	int set_priority(std::uint64_t ptr, std::uint64_t len, std::uint32_t prio);
	int set_priority_of_buffer(std::uint64_t ptr, std::uint32_t prio);	// the whole allocation
	int stats(gpuoversub_usage &out);
	int on_advice(gpuoversub_advice_fn fn, void *ctx) { return advice_.on_advice(fn, ctx); }
	int set_rank(int rank, int local_rank, int world_size, const char *node);
	int report_ranks(const gos_rank_record *records, std::size_t count);	// for libgpuoversub_mpi

private:
	Agent();

	// LinkEvents: the link's news, passed to the parts concerned.
	void order(const gos_wire_order &o) override { executor_.post(o); }
	void lost(std::uint64_t connection) override { executor_.lost(connection); }
	void engine_changed() override { executor_.clear(); }

	bool link();
	CUresult require_engine(const char *what, std::size_t size);
	CUresult track(const BufferRef &b);
	void place_unlinked(Buffer &b);
	CUresult refused(const Buffer &b, int err, const std::string &why);
	CUresult after_free(const BufferRef &b, CUresult r);

	static void before_fork();
	static void after_fork_parent();
	static void after_fork_child();

	Registry registry_;
	RankFacts ranks_;
	Link link_{registry_, ranks_, *this};
	Placement placement_{link_};
	Advice advice_{registry_, link_, ranks_};
	DeferredFrees frees_{link_};
	Reserve reserve_{registry_, link_, placement_};
	OrderExecutor executor_{registry_, link_, placement_, advice_, frees_, reserve_};
	PoolBook pools_;
	// Lock order for fork (see above).
	const std::array<ForkSafe *, 8> fork_order_{&link_,  &registry_, &executor_, &placement_,
						    &frees_, &ranks_,	 &pools_,    &reserve_};
};

} // namespace gos::agent
