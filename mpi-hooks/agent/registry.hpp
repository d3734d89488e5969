// What the agent tracks of its process's GPU memory: every allocation it
// saw, by address (or VMM handle), and by the engine's buffer id once
// registered. Buffers outlive the map entries that hold them while an
// order runs on them (shared_ptr), and op serializes orders with free.
//
// Locks: Registry::mu_ guards the three maps and early SETTLED notices; a leaf (no other agent lock
// is taken while it is held). Buffer::op is held while an order, a free
// or a registration works on a buffer, so that none of them acts on memory
// another has freed; a thread holds one op at a time, except the order
// executor, which holds those of one batch, and nothing waits for an op
// while holding a leaf lock.
#pragma once

#include <atomic>
#include <deque>
#include <optional>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include <gpuoversub/abi.h>

#include "cuda_api.hpp"
#include "fork_safe.hpp"

namespace gos::agent {

enum class Backing {
	managed,	// ours: managed memory, evictable
	app_managed,	// the application's own cuMemAllocManaged, evictable
	device,		// plain device memory: small, pinned library, or passthrough
	pool,		// from an application's memory pool
	vmm,		// a cuMemCreate handle
	context,	// the CUDA context's own memory, reported once per device
};

struct PriorityRange {
	std::uint64_t offset, length;
	std::uint32_t priority;
};

// What was allocated never changes; what the engine knows of it does.
struct Buffer {
	Buffer(std::uint64_t base_, std::uint64_t size_, int dev_, CUcontext ctx_, Backing backing_)
		: base(base_), size(size_), dev(dev_), ctx(ctx_), backing(backing_)
	{
	}

	const std::uint64_t base;	// device address, or the VMM handle
	const std::uint64_t size;
	const int dev;
	const CUcontext ctx;
	const Backing backing;
	std::mutex op;			// held while an order, a free or a registration runs
	// Read without op (the registry forgets ids when the engine goes; advice
	// picks buffers), written under it (forget_ids aside).
	std::atomic<std::uint64_t> engine_id{0};	// 0: not registered with the engine
	std::atomic<std::uint32_t> priority{8};
	std::atomic<bool> freed{false};
	// Put on the host while the daemon was away: registered after the
	// buffers on the device, so that the engine counts those first.
	std::atomic<bool> started_on_host{false};
	std::vector<PriorityRange> ranges;	// under op; sent on registration
	std::uint32_t moves = 0;	// under op: orders carried out on it (a deferred prefetch
					// made stale by one asks the engine instead)
	bool pinned = false;		// given priority 0 on advice; the agent's thread's
	bool registered = false;	// under op: an engine has known it (a later one is told so)
	std::atomic<bool> dead{false};	// in the agent's reserve, its contents of no use; written under op

	bool evictable() const { return backing == Backing::managed || backing == Backing::app_managed; }
};

using BufferRef = std::shared_ptr<Buffer>;

class Registry final : public ForkSafe {
public:
	void add(const BufferRef &b);
	BufferRef take(std::uint64_t base, bool vmm);	// removes it
	BufferRef find(std::uint64_t base, bool vmm) const;
	BufferRef containing(std::uint64_t ptr) const;
	BufferRef by_id(std::uint64_t id) const;
	// b is the engine's buffer id; a SETTLED for it that came before the
	// id was known (its reply and the notice race to the agent) is handed
	// back, for the registering thread to place.
	std::optional<gos_wire_order> set_id(const BufferRef &b, std::uint64_t id);
	// The buffer a SETTLED names, or null: then the notice is kept for
	// set_id, in one step, unless it is of a buffer freed since.
	BufferRef settled_buffer(const gos_wire_order &settled);
	std::vector<BufferRef> all() const;
	std::vector<BufferRef> unregistered() const;
	// Which of GPUs 0..ngpus-1 hold a registered buffer of this process.
	std::vector<bool> gpus_in_use(std::uint32_t ngpus) const;
	void forget_ids();		// the engine is gone; its ids with it

	// fork(): mu_ is held across it; the child's registry starts empty,
	// since the parent's memory is not its own.
	void fork_prepare() override { mu_.lock(); }
	void fork_parent() override { mu_.unlock(); }
	void fork_child() override;

private:
	mutable std::mutex mu_;
	std::map<std::uint64_t, BufferRef> *by_ptr_ = new std::map<std::uint64_t, BufferRef>;
	std::map<std::uint64_t, BufferRef> *by_handle_ = new std::map<std::uint64_t, BufferRef>;	// VMM, context
	std::map<std::uint64_t, BufferRef> *by_id_ = new std::map<std::uint64_t, BufferRef>;
	std::deque<gos_wire_order> early_;	// SETTLED notices ahead of their ids
	static constexpr std::size_t early_max = 64;	// those of buffers freed at once are dropped, oldest first
};

} // namespace gos::agent
