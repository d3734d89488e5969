// The order executor's workers. Migrations of disjoint ranges proceed in
// parallel in the UVM driver (it takes the address-space lock for reading)
// and each is bound by the CPU work of the calling thread, so one batch is
// carried out by several threads, each on a stream of its own (its lane in
// Placement). Lane 0 is the caller's own thread; lanes 1..count-1 are
// threads started on first use, which live as the agent's thread does: in
// Reentry, in relaxed capture mode. GPUOVERSUB_EVICT_WORKERS bounds how
// many a batch asks for.
//
// Lock: mu_ guards the batch in hand (work_, active_, pending_,
// generation_) and started_; a leaf.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>

namespace gos::agent {

// What every thread of the agent's does first: it is never part of an
// application's stream capture (relaxed mode: its frees and moves never
// invalidate one, documented for cuThreadExchangeStreamCaptureMode).
void relax_capture();

class Lanes {
public:
	// Runs work(lane) for each lane below n (fewer if a thread cannot be
	// started), lane 0 on the caller's thread; returns when every lane is
	// done.
	void run(unsigned n, const std::function<void(unsigned)> &work);

	// fork(): mu_ is held across it; the child has none of the threads.
	void fork_prepare() { mu_.lock(); }
	void fork_parent() { mu_.unlock(); }
	void fork_child();

private:
	struct Start {
		Lanes *lanes;
		unsigned lane;
		std::uint64_t seen;
	};
	static void *thread_main(void *start);
	void serve(unsigned lane, std::uint64_t seen);

	std::mutex mu_;
	std::condition_variable go_, done_;
	const std::function<void(unsigned)> *work_ = nullptr;
	unsigned active_ = 0, pending_ = 0, started_ = 1;
	std::uint64_t generation_ = 0;
};

} // namespace gos::agent
