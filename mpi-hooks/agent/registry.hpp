// What the agent tracks of its process's GPU memory: every allocation it
// saw, by address (or VMM handle), and by the engine's buffer id once
// registered. Buffers outlive the map entries that hold them while an
// order runs on them (shared_ptr), and op serializes orders with free.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "cuda_api.hpp"

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

struct Buffer {
	std::uint64_t base = 0;		// device address, or the VMM handle
	std::uint64_t size = 0;
	int dev = 0;
	CUcontext ctx = nullptr;
	Backing backing = Backing::device;
	std::uint64_t engine_id = 0;	// 0: not registered with the engine
	std::uint32_t priority = 8;
	std::vector<PriorityRange> ranges;	// set before registration
	std::mutex op;			// held while an order or free runs
	bool freed = false;
	bool pinned = false;		// given priority 0 on advice

	bool evictable() const { return backing == Backing::managed || backing == Backing::app_managed; }
};

using BufferRef = std::shared_ptr<Buffer>;

class Registry {
public:
	void add(const BufferRef &b);
	BufferRef take(std::uint64_t base, bool vmm);	// removes it
	BufferRef containing(std::uint64_t ptr) const;
	BufferRef by_id(std::uint64_t id) const;
	void set_id(const BufferRef &b, std::uint64_t id);
	std::vector<BufferRef> all() const;
	std::vector<BufferRef> unregistered() const;
	void forget_ids();		// the engine is gone; its ids with it
	void drop_all_for_child();	// after fork: the parent's memory is not ours
	std::mutex &lock() { return mu_; }

private:
	mutable std::mutex mu_;
	std::map<std::uint64_t, BufferRef> *by_ptr_ = new std::map<std::uint64_t, BufferRef>;
	std::map<std::uint64_t, BufferRef> *by_handle_ = new std::map<std::uint64_t, BufferRef>;
	std::map<std::uint64_t, BufferRef> *by_id_ = new std::map<std::uint64_t, BufferRef>;
};

} // namespace gos::agent
