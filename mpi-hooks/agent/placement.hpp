// Where a buffer's bytes live: its preferred location and a prefetch there,
// issued on the agent's private stream in the buffer's context and never
// waited for here (the order executor waits once per batch). Evicted data
// stays mapped for the GPU (accessed-by), so kernels keep running on it
// over the link.
//
// Lock: mu_ guards streams_ (one per context, made on first use); a leaf.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>

#include "fork_safe.hpp"
#include "link.hpp"

namespace gos::agent {

class Placement final : public ForkSafe {
public:
	explicit Placement(const Link &link) : link_(link) {}

	// Advises and prefetches [offset, offset + length) of b to the device,
	// or to host node numa (-1: any).
	int place(const Buffer &b, std::uint64_t offset, std::uint64_t length, bool on_device, int numa);
	// Asks the engine where each chunk of b is and puts it there.
	int place_as_engine_says(const Buffer &b);
	// A buffer just registered, as the engine's reply says. False when its
	// prefetch to the device is left to the agent's thread.
	bool place_new(const Buffer &b, const gos_rep_alloc &rep);
	// Waits for what was issued in ctx: 0 or -EIO.
	int wait(CUcontext ctx);

	// fork(): mu_ is held across it; the child's streams are not its own.
	void fork_prepare() override { mu_.lock(); }
	void fork_parent() override { mu_.unlock(); }
	void fork_child() override;

private:
	CUstream stream_for(CUcontext ctx);
	int move(const Buffer &b, CUdeviceptr p, std::uint64_t length, bool on_device, int numa);

	const Link &link_;
	std::mutex mu_;
	std::map<CUcontext, CUstream> streams_;
};

} // namespace gos::agent
