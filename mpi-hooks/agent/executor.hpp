// The agent's thread and the engine's orders: queued by the client's
// thread, carried out here in arrival order, consecutive moves coalesced
// into runs and carried out by the lanes together (runs.hpp, lanes.hpp),
// each order acknowledged with the batch's duration; notices (SETTLED,
// ADVICE) are acted on and acknowledged by nobody.
// Between batches the thread frees deferred buffers, refills the reserve, reports kernel
// launches as activity, hands a lost connection to the link, and relinks
// when the daemon is back.
//
// Lock: mu_ guards the queue (orders_, prefetches_, lost_, nudged_), started_ and cv_; a leaf,
// taken before the lanes' own (at fork).
// The thread owns the rest; the counters are atomics.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "advice.hpp"
#include "fork_safe.hpp"
#include "frees.hpp"
#include "lanes.hpp"
#include "link.hpp"
#include "placement.hpp"
#include "registration.hpp"
#include "reserve.hpp"

namespace gos::agent {

class OrderExecutor final : public ForkSafe {
public:
	OrderExecutor(Registry &registry, Link &link, Placement &placement, Advice &advice, DeferredFrees &frees,
		      Reserve &reserve)
		: registry_(registry), link_(link), placement_(placement), advice_(advice), frees_(frees),
		  reserve_(reserve)
	{
	}

	void start();	// the thread, once (and once more in a forked child)
	void post(const gos_wire_order &o);
	// A new buffer's device part, prefetched here (registration.hpp).
	void prefetch_later(const BufferRef &b, const Registration &r);
	void lost(std::uint64_t connection);	// the thread tells the link
	void clear();	// the orders queued are for an engine that is gone
	void nudge();	// the reserve wants refilling now

	// One more kernel launch: a relaxed increment, nothing else.
	static void count_launch() { launches_.fetch_add(1, std::memory_order_relaxed); }

	struct Moved {
		std::uint64_t evictions, returns, bytes_evicted, bytes_returned;
	};
	Moved moved() const { return {evictions_, returns_, bytes_evicted_, bytes_returned_}; }

	// fork(): mu_ is held across it; the child has neither the thread nor
	// its parent's orders.
	void fork_prepare() override
	{
		mu_.lock();
		lanes_.fork_prepare();
	}
	void fork_parent() override
	{
		lanes_.fork_parent();
		mu_.unlock();
	}
	void fork_child() override;

private:
	static void *thread_main(void *self);
	void run();
	void execute(const std::vector<gos_wire_order> &batch);
	void prefetch(const std::vector<std::pair<BufferRef, Registration>> &due);
	void execute_moves(const std::vector<const gos_wire_order *> &moves);
	void report_activity();

	static constexpr std::size_t max_batch = 256;	// orders issued before one wait

	Registry &registry_;
	Link &link_;
	Placement &placement_;
	Advice &advice_;
	DeferredFrees &frees_;
	Reserve &reserve_;

	std::mutex mu_;
	std::condition_variable cv_;
	std::deque<gos_wire_order> orders_;
	std::vector<std::pair<BufferRef, Registration>> prefetches_;
	std::uint64_t lost_ = 0;	// a connection that dropped, 0 when none
	bool started_ = false;
	bool nudged_ = false;
	Lanes lanes_;

	std::atomic<std::uint64_t> evictions_{0}, returns_{0}, bytes_evicted_{0}, bytes_returned_{0};
	static inline std::atomic<std::uint64_t> launches_{0};
	std::uint64_t launches_reported_ = 0;
	std::chrono::steady_clock::time_point next_activity_{};
};

} // namespace gos::agent
