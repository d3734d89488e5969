// Memory pools. Sources: cuda.h of CUDA 13.0 and its "Stream Ordered
// Memory Allocator" section (documented); none measured on a GPU here yet.
#include "pools.hpp"

#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "device_state.hpp"
#include "memory.hpp"

namespace fakecuda {

struct Pool {
	int dev = 0;
	bool is_default = false, destroyed = false;
	std::uint64_t release_threshold = 0;	// documented default
	int reuse_flags[3] = {1, 1, 1};		// the CU_MEMPOOL_ATTR_REUSE_* flags, kept but not obeyed
	std::map<std::uint64_t, std::uint64_t> live;	// handed out: ptr -> size
	struct Block {
		std::uint64_t ptr, size;
		StreamPoint freed;
	};
	std::vector<Block> free;
};

namespace {

std::mutex mu;
std::set<Pool *> pools;
Pool *defaults[max_devices];
CUmemoryPool currents[max_devices];

Pool *as_pool(CUmemoryPool p)
{
	auto *pool = reinterpret_cast<Pool *>(p);
	return pools.count(pool) ? pool : nullptr;
}

CUmemoryPool handle(Pool *p) { return reinterpret_cast<CUmemoryPool>(p); }

std::uint64_t held(const Pool &p)
{
	std::uint64_t n = 0;
	for (auto &b : p.free)
		n += b.size;
	return n;
}

// Gives blocks whose free the stream has reached back to the device while
// the pool holds more than keep bytes unused. Caller holds mu.
void release(Pool &p, std::uint64_t keep)
{
	std::uint64_t unused = held(p);
	for (auto it = p.free.begin(); it != p.free.end() && unused > keep;) {
		if (!reached(it->freed)) {
			++it;
			continue;
		}
		unused -= it->size;
		free_memory(it->ptr);
		it = p.free.erase(it);
	}
}

void forget_if_done(Pool *p)
{
	if (p->destroyed && p->live.empty() && p->free.empty()) {
		pools.erase(p);
		delete p;
	}
}

} // namespace

// Documented: allocType must be PINNED. The fake models device pools only.
int pool_create(const CUmemPoolProps &props, CUmemoryPool &out)
{
	if (props.allocType != CU_MEM_ALLOCATION_TYPE_PINNED)
		return CUDA_ERROR_INVALID_VALUE;
	if (props.location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (props.location.id < 0 || props.location.id >= device_count())
		return CUDA_ERROR_INVALID_DEVICE;
	auto *p = new Pool;
	p->dev = props.location.id;
	std::lock_guard g(mu);
	pools.insert(p);
	out = handle(p);
	return CUDA_SUCCESS;
}

// Documented: destroying a pool with allocations outstanding returns at
// once, its memory released when they are freed; destroying a device's
// current pool makes the default pool current again.
int pool_destroy(CUmemoryPool pool)
{
	std::lock_guard g(mu);
	Pool *p = as_pool(pool);
	if (!p || p->is_default || p->destroyed)
		return CUDA_ERROR_INVALID_VALUE;
	p->destroyed = true;
	for (auto &b : p->free)
		free_memory(b.ptr);
	p->free.clear();
	if (currents[p->dev] == pool)
		currents[p->dev] = nullptr;
	forget_if_done(p);
	return CUDA_SUCCESS;
}

CUmemoryPool default_pool(int dev)
{
	std::lock_guard g(mu);
	if (!defaults[dev]) {
		defaults[dev] = new Pool;
		defaults[dev]->dev = dev;
		defaults[dev]->is_default = true;
		pools.insert(defaults[dev]);
	}
	return handle(defaults[dev]);
}

// Documented: cuMemAllocAsync takes from the pool current to the device,
// the default one unless cuDeviceSetMemPool chose another.
CUmemoryPool current_pool(int dev)
{
	{
		std::lock_guard g(mu);
		if (currents[dev])
			return currents[dev];
	}
	return default_pool(dev);
}

int set_current_pool(int dev, CUmemoryPool pool)
{
	std::lock_guard g(mu);
	Pool *p = as_pool(pool);
	if (!p || p->dev != dev)
		return CUDA_ERROR_INVALID_VALUE;
	currents[dev] = pool;
	return CUDA_SUCCESS;
}

bool is_pool(CUmemoryPool pool)
{
	std::lock_guard g(mu);
	return as_pool(pool) != nullptr;
}

// Documented: the allocator may hand a freed block out again only when it
// can guarantee that accesses before the free and after the new allocation
// do not overlap; stream order gives that on the same stream, and the free
// being done gives it anywhere. The real driver may also follow event
// dependencies or insert its own (the REUSE_* attributes); the fake does
// neither, so it never reuses earlier than the driver could.
int pool_alloc(CUmemoryPool pool, std::uint64_t size, const StreamRef &s, std::uint64_t &ptr)
{
	std::lock_guard g(mu);
	Pool *p = as_pool(pool);
	if (!p || p->destroyed || !size)
		return CUDA_ERROR_INVALID_VALUE;
	auto best = p->free.end();
	for (auto it = p->free.begin(); it != p->free.end(); ++it)
		if (it->size >= size && (it->freed.stream == s || reached(it->freed)) &&
		    (best == p->free.end() || it->size < best->size))
			best = it;
	if (best != p->free.end()) {
		ptr = best->ptr;
		p->live[ptr] = best->size;
		p->free.erase(best);
		return CUDA_SUCCESS;
	}
	int err = alloc_device(p->dev, size, Origin::pool, ptr);
	if (err == CUDA_ERROR_OUT_OF_MEMORY) {	// what the pool holds unused goes first
		release(*p, 0);
		err = alloc_device(p->dev, size, Origin::pool, ptr);
	}
	if (!err)
		p->live[ptr] = size;
	return err;
}

bool pool_free(std::uint64_t ptr, const StreamRef &s)
{
	StreamPoint at = s ? enqueue(s) : StreamPoint{};
	std::lock_guard g(mu);
	for (Pool *p : pools) {
		auto it = p->live.find(ptr);
		if (it == p->live.end())
			continue;
		std::uint64_t size = it->second;
		p->live.erase(it);
		if (p->destroyed)
			free_memory(ptr);
		else
			p->free.push_back({ptr, size, at});
		forget_if_done(p);
		return true;
	}
	return false;
}

int pool_attribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value, bool set)
{
	std::lock_guard g(mu);
	Pool *p = as_pool(pool);
	if (!p || !value)
		return CUDA_ERROR_INVALID_VALUE;
	auto *u64 = static_cast<cuuint64_t *>(value);
	auto *i32 = static_cast<int *>(value);
	std::uint64_t used = 0;
	for (auto &[ptr, size] : p->live)
		used += size;
	switch (attr) {
	case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: {
		int &flag = p->reuse_flags[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES];
		if (set)
			flag = *i32;
		else
			*i32 = flag;
		return CUDA_SUCCESS;
	}
	case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
		if (set)
			p->release_threshold = *u64;
		else
			*u64 = p->release_threshold;
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
	case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
		if (set)	// read-only (documented)
			return CUDA_ERROR_INVALID_VALUE;
		*u64 = attr == CU_MEMPOOL_ATTR_USED_MEM_CURRENT ? used : used + held(*p);
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

// Documented: releases memory until the pool reserves fewer than keep
// bytes, or nothing more can safely be released.
int pool_trim(CUmemoryPool pool, std::uint64_t keep)
{
	std::lock_guard g(mu);
	Pool *p = as_pool(pool);
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	std::uint64_t used = 0;
	for (auto &[ptr, size] : p->live)
		used += size;
	release(*p, keep > used ? keep - used : 0);
	return CUDA_SUCCESS;
}

// Documented (CU_MEMPOOL_ATTR_RELEASE_THRESHOLD): a pool holding more than
// its threshold unused tries to release memory at the next stream, event or
// context synchronization.
void pools_release_at_sync()
{
	std::lock_guard g(mu);
	for (Pool *p : pools)
		release(*p, p->release_threshold);
}

} // namespace fakecuda
