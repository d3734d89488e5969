// Where a buffer's bytes live: its preferred location and a prefetch there,
// issued on one of the agent's private streams in the buffer's context (one
// per lane: the order executor's workers each issue on their own) and never
// waited for here (the executor waits once per batch and lane). Evicted
// data stays mapped for the GPU (accessed-by), so kernels keep running on
// it over the link. Dead data (the reserve's) is discarded and moved
// without a copy where the driver allows it (CUDA 13), else migrated.
//
// Lock: mu_ guards streams_ (one per context and lane, made on first use);
// a leaf.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

#include "fork_safe.hpp"
#include "link.hpp"

namespace gos::agent {

// What place() does: the advice changes the address space's policy, which
// the UVM driver serializes against migrations (it takes the address-space
// lock for writing, migrations for reading), so a batch advises every run
// first and then migrates them all in parallel.
enum class Step { advise, prefetch, both };

class Placement final : public ForkSafe {
public:
	explicit Placement(const Link &link) : link_(link) {}

	// Advises and prefetches [offset, offset + length) of b to the device,
	// or to host node numa (-1: any), on lane's stream; dead: its contents
	// need not be kept.
	int place(const Buffer &b, std::uint64_t offset, std::uint64_t length, bool on_device, int numa,
		  unsigned lane = 0, bool dead = false, Step step = Step::both);
	// Asks the engine where each chunk of b is and puts it there: for an
	// engine older than GOS_ALLOC_IN_ORDER, or after an order it gave up on.
	int place_as_engine_says(const Buffer &b);
	// A buffer just registered, as the engine's reply says (abi.h,
	// gos_rep_alloc). False when its device part, [0, rep.device_bytes),
	// is left to the agent's thread (prefetch_now false).
	bool place_new(const Buffer &b, const gos_rep_alloc &rep, bool prefetch_now);
	// Its waiting chunks, as a SETTLED notice says.
	void place_settled(const Buffer &b, const gos_wire_order &settled);
	// Waits for what was issued in ctx on lane: 0 or -EIO.
	int wait(CUcontext ctx, unsigned lane = 0);

	// fork(): mu_ is held across it; the child's streams are not its own.
	void fork_prepare() override { mu_.lock(); }
	void fork_parent() override { mu_.unlock(); }
	void fork_child() override;

private:
	CUstream stream_for(CUcontext ctx, unsigned lane);
	int move(const Buffer &b, CUdeviceptr p, std::uint64_t length, bool on_device, int numa, unsigned lane,
		 bool dead, Step step);

	const Link &link_;
	std::mutex mu_;
	std::map<std::pair<CUcontext, unsigned>, CUstream> streams_;
};

} // namespace gos::agent
