// The reserve: managed buffers of this process, registered with the engine
// and prefetched to the device before anyone asks, so that an allocation of
// a size the process has allocated before is served at once: no driver
// allocation, no daemon round trip, no prefetch (each of which cost the
// allocation path; bench/RESULTS.md). A free returns its buffer here while
// the reserve has room (GPUOVERSUB_RESERVE bytes, 0 = off); the agent's
// thread keeps one block of each size the process allocates.
//
// Accounting stays exact by construction: a block is one registered buffer
// of the job's, in the reserve or the application's, so the engine counts
// the job's memory as what the application holds plus what the reserve
// holds, and moving a block between them changes nothing it knows. Its
// contents are dead while it is here (Buffer::dead), so an eviction
// discards rather than migrates them.
//
// Lock: mu_ guards blocks_, wanted_, held_; a leaf, taken under a
// Buffer::op (give_back), never the other way round.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "fork_safe.hpp"
#include "link.hpp"
#include "placement.hpp"
#include "registry.hpp"

namespace gos::agent {

class Reserve final : public ForkSafe {
public:
	Reserve(Registry &registry, Link &link, Placement &placement)
		: registry_(registry), link_(link), placement_(placement)
	{
	}

	// A block of exactly size in ctx (on dev), now the application's; null
	// when there is none. The size is kept in stock from now on.
	BufferRef take(int dev, CUcontext ctx, std::uint64_t size);
	// b, which the application frees, kept in the reserve when there is
	// room: true, and b stays registered. b must not be in the reserve.
	bool give_back(const BufferRef &b);
	// On the agent's thread: a block of each size wanted that has none.
	void refill();
	std::uint64_t bytes(int dev);	// held for dev

	// fork(): mu_ is held across it; the child's reserve is empty, since
	// the parent's memory is not its own.
	void fork_prepare() override { mu_.lock(); }
	void fork_parent() override { mu_.unlock(); }
	void fork_child() override;

private:
	using Size = std::pair<CUcontext, std::uint64_t>;	// a block's context and bytes

	BufferRef make_block(CUcontext ctx, int dev, std::uint64_t size);

	Registry &registry_;
	Link &link_;
	Placement &placement_;
	std::mutex mu_;
	std::map<Size, std::vector<BufferRef>> blocks_;
	std::map<Size, int> wanted_;	// the device of each
	std::uint64_t held_ = 0;
};

} // namespace gos::agent
