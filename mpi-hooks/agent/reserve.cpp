#include "reserve.hpp"

#include <gpuoversub/gpuoversub.h>

#include "driver.hpp"
#include "registration.hpp"
#include "settings.hpp"

namespace gos::agent {

BufferRef Reserve::take(int dev, CUcontext ctx, std::uint64_t size)
{
	std::uint64_t bound = settings().reserve_bytes;
	if (size > bound)
		return nullptr;
	BufferRef b;
	{
		std::lock_guard g(mu_);
		wanted_[{ctx, size}] = dev;
		auto it = blocks_.find({ctx, size});
		if (it == blocks_.end() || it->second.empty())
			return nullptr;
		b = it->second.back();
		it->second.pop_back();
		held_ -= size;
	}
	std::lock_guard op(b->op);
	b->dead = false;
	return b;
}

bool Reserve::give_back(const BufferRef &b)
{
	std::uint64_t bound = settings().reserve_bytes;
	std::lock_guard op(b->op);
	// Only a block exactly as it came: registered, with the default
	// priority and no ranges, so the engine holds nothing of its past user.
	if (!bound || b->backing != Backing::managed || !b->engine_id || b->freed || b->dead || b->pinned ||
	    !b->ranges.empty() ||
	    b->priority != GPUOVERSUB_PRIORITY_DEFAULT)
		return false;
	std::lock_guard g(mu_);
	if (held_ + b->size > bound)
		return false;
	b->dead = true;
	blocks_[{b->ctx, b->size}].push_back(b);
	held_ += b->size;
	return true;
}

// Registered and placed like any allocation, its device part prefetched at
// once, then waited for, so that what the reserve offers is resident.
BufferRef Reserve::make_block(CUcontext ctx, int dev, std::uint64_t size)
{
	const Driver &d = driver();
	if (d.cuCtxPushCurrent_v2(ctx) != CUDA_SUCCESS)
		return nullptr;
	CUdeviceptr p = 0;
	CUresult r = d.cuMemAllocManaged(&p, size, CU_MEM_ATTACH_GLOBAL);
	CUcontext popped;
	d.cuCtxPopCurrent_v2(&popped);
	if (r != CUDA_SUCCESS)
		return nullptr;
	auto b = std::make_shared<Buffer>(p, size, dev, ctx, Backing::managed);
	b->dead = true;	// no one's data yet
	registry_.add(b);
	if (register_and_place(link_, placement_, b, nullptr, true).err) {
		registry_.take(p, false);
		d.cuMemFree_v2(p);
		return nullptr;
	}
	placement_.wait(ctx);
	return b;
}

void Reserve::refill()
{
	std::uint64_t bound = settings().reserve_bytes;
	if (!bound || !link_.engine())
		return;
	std::vector<std::pair<Size, int>> missing;
	{
		std::lock_guard g(mu_);
		for (const auto &[size, dev] : wanted_)
			if (blocks_[size].empty())
				missing.emplace_back(size, dev);
	}
	for (const auto &[size, dev] : missing) {
		{
			std::lock_guard g(mu_);
			if (held_ + size.second > bound)
				continue;
			held_ += size.second;	// spoken for while it is made
		}
		BufferRef b = make_block(size.first, dev, size.second);
		std::lock_guard g(mu_);
		if (b)
			blocks_[size].push_back(b);
		else {
			held_ -= size.second;
			wanted_.erase(size);	// refused: not asked again until allocated again
		}
	}
}

std::uint64_t Reserve::bytes(int dev)
{
	std::lock_guard g(mu_);
	std::uint64_t sum = 0;
	for (const auto &[size, blocks] : blocks_)
		for (const BufferRef &b : blocks)
			sum += b->dev == dev ? b->size : 0;
	return sum;
}

void Reserve::fork_child()
{
	blocks_.clear();
	wanted_.clear();
	held_ = 0;
	mu_.unlock();
}

} // namespace gos::agent
