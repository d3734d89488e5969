#include "memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cuda.h>

#include <map>
#include <mutex>
#include <vector>

#include "device_state.hpp"

namespace fakecuda {
namespace {

enum class Kind { device, managed, reserved };

struct Allocation {
	std::uint64_t size = 0;
	Kind kind = Kind::device;
	int dev = 0;
	std::vector<Where> where;	// managed: per page
	std::vector<Where> preferred;
};

struct Handle {
	int dev;
	std::uint64_t size;
	bool charged;
};

std::mutex mu;
std::map<std::uint64_t, Allocation> allocations;
std::map<std::uint64_t, Handle> handles;
std::uint64_t next_handle = 1;

std::uint64_t round_up(std::uint64_t n) { return (n + page - 1) / page * page; }

// The allocation holding ptr; end() if none. Caller holds mu.
std::map<std::uint64_t, Allocation>::iterator holding(std::uint64_t ptr)
{
	auto it = allocations.upper_bound(ptr);
	if (it == allocations.begin())
		return allocations.end();
	--it;
	return ptr < it->first + it->second.size ? it : allocations.end();
}

int map_pages(std::uint64_t size, std::uint64_t &ptr)
{
	void *p = mmap(nullptr, round_up(size), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return CUDA_ERROR_OUT_OF_MEMORY;
	ptr = reinterpret_cast<std::uint64_t>(p);
	return CUDA_SUCCESS;
}

// Moves pages [first, last) of a to `to`, charging the device. Caller holds mu.
void move_pages(Allocation &a, std::size_t first, std::size_t last, Where to)
{
	std::uint64_t gained = 0, lost = 0;
	for (std::size_t i = first; i < last; i++) {
		if (a.where[i] == to)
			continue;
		if (a.where[i] == Where::device)
			lost += page;
		if (to == Where::device)
			gained += page;
		a.where[i] = to;
	}
	if (lost)
		discharge(a.dev, lost);
	if (gained)
		charge(a.dev, gained, false);
}

std::pair<std::size_t, std::size_t> pages_of(const std::pair<const std::uint64_t, Allocation> &a, std::uint64_t ptr,
					      std::uint64_t len)
{
	std::size_t first = (ptr - a.first) / page;
	std::size_t last = (ptr - a.first + len + page - 1) / page;
	return {first, last};
}

} // namespace

int alloc_device(int dev, std::uint64_t size, std::uint64_t &ptr)
{
	if (!size)
		return CUDA_ERROR_INVALID_VALUE;
	if (!charge(dev, size, true))
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (int err = map_pages(size, ptr)) {
		discharge(dev, size);
		return err;
	}
	std::lock_guard g(mu);
	allocations[ptr] = Allocation{size, Kind::device, dev, {}, {}};
	return CUDA_SUCCESS;
}

int alloc_managed(int dev, std::uint64_t size, std::uint64_t &ptr)
{
	if (!size)
		return CUDA_ERROR_INVALID_VALUE;
	if (int err = map_pages(size, ptr))
		return err;
	std::size_t n = round_up(size) / page;
	std::lock_guard g(mu);
	allocations[ptr] = Allocation{size, Kind::managed, dev, std::vector<Where>(n, Where::none),
				      std::vector<Where>(n, Where::none)};
	return CUDA_SUCCESS;
}

int reserve(std::uint64_t size, std::uint64_t &ptr)
{
	if (!size || size % page)
		return CUDA_ERROR_INVALID_VALUE;
	if (int err = map_pages(size, ptr))
		return err;
	std::lock_guard g(mu);
	allocations[ptr] = Allocation{size, Kind::reserved, 0, {}, {}};
	return CUDA_SUCCESS;
}

int free_memory(std::uint64_t ptr)
{
	std::unique_lock g(mu);
	auto it = allocations.find(ptr);
	if (it == allocations.end())
		return CUDA_ERROR_INVALID_VALUE;
	Allocation a = std::move(it->second);
	allocations.erase(it);
	g.unlock();
	if (a.kind == Kind::device)
		discharge(a.dev, a.size);
	if (a.kind == Kind::managed) {
		std::uint64_t on_device = 0;
		for (Where w : a.where)
			on_device += w == Where::device ? page : 0;
		discharge(a.dev, on_device);
	}
	munmap(reinterpret_cast<void *>(ptr), round_up(a.size));
	return CUDA_SUCCESS;
}

int address_range(std::uint64_t ptr, std::uint64_t &base, std::uint64_t &size)
{
	std::lock_guard g(mu);
	auto it = holding(ptr);
	if (it == allocations.end())
		return CUDA_ERROR_NOT_FOUND;
	base = it->first;
	size = it->second.size;
	return CUDA_SUCCESS;
}

bool is_managed(std::uint64_t ptr)
{
	std::lock_guard g(mu);
	auto it = holding(ptr);
	return it != allocations.end() && it->second.kind == Kind::managed;
}

int check_range(std::uint64_t ptr, std::uint64_t len)
{
	std::lock_guard g(mu);
	auto it = holding(ptr);
	if (it == allocations.end() || ptr + len > it->first + it->second.size)
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

int prefetch(std::uint64_t ptr, std::uint64_t len, Where to)
{
	{
		std::lock_guard g(mu);
		auto it = holding(ptr);
		if (it == allocations.end() || it->second.kind != Kind::managed ||
		    ptr + len > it->first + it->second.size)
			return CUDA_ERROR_INVALID_VALUE;
		auto [first, last] = pages_of(*it, ptr, len);
		move_pages(it->second, first, last, to);
	}
	if (std::uint64_t ms = prefetch_delay_ms())
		usleep(static_cast<useconds_t>(ms * 1000));
	return CUDA_SUCCESS;
}

int prefer(std::uint64_t ptr, std::uint64_t len, Where where)
{
	std::lock_guard g(mu);
	auto it = holding(ptr);
	if (it == allocations.end() || it->second.kind != Kind::managed || ptr + len > it->first + it->second.size)
		return CUDA_ERROR_INVALID_VALUE;
	auto [first, last] = pages_of(*it, ptr, len);
	for (std::size_t i = first; i < last; i++)
		it->second.preferred[i] = where;
	return CUDA_SUCCESS;
}

void touch(std::uint64_t ptr, std::uint64_t len)
{
	std::lock_guard g(mu);
	auto it = holding(ptr);
	if (it == allocations.end() || it->second.kind != Kind::managed || !len)
		return;
	auto [first, last] = pages_of(*it, ptr, len);
	Allocation &a = it->second;
	for (std::size_t i = first; i < last && i < a.where.size(); i++)
		if (a.where[i] == Where::none)
			move_pages(a, i, i + 1, a.preferred[i] == Where::host ? Where::host : Where::device);
}

void residency(std::uint64_t ptr, std::uint64_t len, std::uint64_t &device, std::uint64_t &host)
{
	device = host = 0;
	std::lock_guard g(mu);
	auto it = holding(ptr);
	if (it == allocations.end())
		return;
	if (it->second.kind != Kind::managed) {
		device = len;
		return;
	}
	auto [first, last] = pages_of(*it, ptr, len);
	for (std::size_t i = first; i < last && i < it->second.where.size(); i++) {
		device += it->second.where[i] == Where::device ? page : 0;
		host += it->second.where[i] == Where::host ? page : 0;
	}
}

int vmm_create(int dev, bool on_device, std::uint64_t size, std::uint64_t &handle)
{
	if (!size || size % page)
		return CUDA_ERROR_INVALID_VALUE;
	if (on_device && !charge(dev, size, true))
		return CUDA_ERROR_OUT_OF_MEMORY;
	std::lock_guard g(mu);
	handle = next_handle++;
	handles[handle] = Handle{dev, size, on_device};
	return CUDA_SUCCESS;
}

int vmm_release(std::uint64_t handle)
{
	std::unique_lock g(mu);
	auto it = handles.find(handle);
	if (it == handles.end())
		return CUDA_ERROR_INVALID_VALUE;
	Handle h = it->second;
	handles.erase(it);
	g.unlock();
	if (h.charged)
		discharge(h.dev, h.size);
	return CUDA_SUCCESS;
}

} // namespace fakecuda
