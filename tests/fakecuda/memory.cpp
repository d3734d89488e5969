#include "memory.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "device_state.hpp"
#include "vmm.hpp"

namespace fakecuda {
namespace {

enum class Kind { device, managed, imported };

struct Allocation {
	std::uint64_t size = 0;
	Kind kind = Kind::device;
	int dev = 0;
	Origin origin = Origin::mem_alloc;
	int shared_fd = -1;		// exported: the memfd now behind its pages
	std::vector<Where> where;	// managed: per page
	std::vector<Where> preferred;
};

std::mutex mu;
std::map<std::uint64_t, Allocation> allocations;

// What a CUipcMemHandle carries in the fake: the exporter and the memfd
// behind the allocation, which an importer opens through /proc.
struct IpcHandle {
	std::uint32_t magic;
	std::int32_t pid, fd;
	std::uint32_t pad;
	std::uint64_t size;
};
constexpr std::uint32_t ipc_magic = 0x49504346;	// "FCPI"
static_assert(sizeof(IpcHandle) <= sizeof(CUipcMemHandle));

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

// Turns this process's managed pages on dev that the driver evicted (for
// another process: device_state.hpp) into host pages, first found first.
// Caller holds mu.
void absorb_evictions()
{
	for (int dev = 0; dev < device_count(); dev++) {
		std::uint64_t left = take_evicted(dev);
		for (auto it = allocations.begin(); left && it != allocations.end(); ++it) {
			Allocation &a = it->second;
			if (a.kind != Kind::managed || a.dev != dev)
				continue;
			for (std::size_t i = 0; left && i < a.where.size(); i++)
				if (a.where[i] == Where::device) {
					a.where[i] = Where::host;
					left -= left < page ? left : page;
				}
		}
	}
}

// Moves pages [first, last) of a to `to`, charging the device; the bytes
// that changed place. Caller holds mu.
std::uint64_t move_pages(Allocation &a, std::size_t first, std::size_t last, Where to)
{
	std::uint64_t moved = 0;
	std::uint64_t gained = 0, lost = 0;
	for (std::size_t i = first; i < last; i++) {
		if (a.where[i] == to)
			continue;
		if (a.where[i] == Where::device)
			lost += page;
		if (to == Where::device)
			gained += page;
		a.where[i] = to;
		moved += page;
	}
	if (lost)
		discharge_managed(a.dev, lost);
	if (gained)
		charge_managed(a.dev, gained);
	return moved;
}

std::pair<std::size_t, std::size_t> pages_of(const std::pair<const std::uint64_t, Allocation> &a, std::uint64_t ptr,
					      std::uint64_t len)
{
	std::size_t first = (ptr - a.first) / page;
	std::size_t last = (ptr - a.first + len + page - 1) / page;
	return {first, last};
}

} // namespace

int alloc_device(int dev, std::uint64_t size, Origin origin, std::uint64_t &ptr)
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
	allocations[ptr] = Allocation{size, Kind::device, dev, origin, -1, {}, {}};
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
	allocations[ptr] = Allocation{size, Kind::managed, dev, Origin::mem_alloc, -1, std::vector<Where>(n, Where::none),
				      std::vector<Where>(n, Where::none)};
	return CUDA_SUCCESS;
}

int free_memory(std::uint64_t ptr)
{
	std::unique_lock g(mu);
	absorb_evictions();
	auto it = allocations.find(ptr);
	// Documented: imported memory is closed with cuIpcCloseMemHandle.
	if (it == allocations.end() || it->second.kind == Kind::imported)
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
		discharge_managed(a.dev, on_device);
	}
	if (a.shared_fd >= 0)
		close(a.shared_fd);
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

int check_range(std::uint64_t ptr, std::uint64_t len, bool write)
{
	{
		std::lock_guard g(mu);
		auto it = holding(ptr);
		if (it != allocations.end())
			return ptr + len > it->first + it->second.size ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
	}
	return vmm_check_access(ptr, len, write);
}

int prefetch(std::uint64_t ptr, std::uint64_t len, Where to, std::uint64_t *moved)
{
	{
		std::lock_guard g(mu);
		absorb_evictions();
		auto it = holding(ptr);
		if (it == allocations.end() || it->second.kind != Kind::managed ||
		    ptr + len > it->first + it->second.size)
			return CUDA_ERROR_INVALID_VALUE;
		auto [first, last] = pages_of(*it, ptr, len);
		std::uint64_t n = move_pages(it->second, first, last, to);
		if (moved)
			*moved = n;
	}
	if (std::uint64_t ms = prefetch_delay_ms())
		usleep(static_cast<useconds_t>(ms * 1000));
	return CUDA_SUCCESS;
}

// The contents become indeterminate (cuda.h): the fake scribbles over them,
// so that a test reading data discarded while live sees it.
int discard(std::uint64_t ptr, std::uint64_t len)
{
	std::lock_guard g(mu);
	auto it = holding(ptr);
	if (it == allocations.end() || it->second.kind != Kind::managed || ptr + len > it->first + it->second.size)
		return CUDA_ERROR_INVALID_VALUE;
	std::memset(reinterpret_cast<void *>(ptr), 0xdd, len);
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
	absorb_evictions();
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
	absorb_evictions();
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

// Documented (cuIpcGetMemHandle in cuda.h): the pointer must be the base
// of an allocation made with cuMemAlloc. Managed memory, pool and graph
// allocations and VMM mappings are refused with CUDA_ERROR_INVALID_VALUE:
// reported for managed memory in cupy/cupy#9306 (cudaIpcGetMemHandle on
// cudaMallocManaged memory, "cudaErrorInvalidValue"); not yet measured
// here. The first export moves the allocation's pages into a memfd at the
// same address, so that an importer shares them.
int ipc_export(std::uint64_t ptr, CUipcMemHandle &out)
{
	std::lock_guard g(mu);
	auto it = allocations.find(ptr);
	if (it == allocations.end() || it->second.kind != Kind::device || it->second.origin != Origin::mem_alloc)
		return CUDA_ERROR_INVALID_VALUE;
	Allocation &a = it->second;
	std::uint64_t len = round_up(a.size);
	if (a.shared_fd < 0) {
		int fd = memfd_create("fakecuda-ipc", MFD_CLOEXEC);
		if (fd < 0)
			return CUDA_ERROR_OUT_OF_MEMORY;
		void *at = reinterpret_cast<void *>(ptr);
		void *copy = ftruncate(fd, static_cast<off_t>(len)) == 0
				     ? mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
				     : MAP_FAILED;
		if (copy != MAP_FAILED) {
			std::memcpy(copy, at, len);
			munmap(copy, len);
		}
		if (copy == MAP_FAILED || mmap(at, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
			close(fd);
			return CUDA_ERROR_MAP_FAILED;
		}
		a.shared_fd = fd;
	}
	IpcHandle h{ipc_magic, getpid(), a.shared_fd, 0, a.size};
	std::memset(&out, 0, sizeof out);
	std::memcpy(&out, &h, sizeof h);
	return CUDA_SUCCESS;
}

// The exporter's memfd, opened through /proc, mapped at a new address.
// Not charged: the memory is the exporter's.
int ipc_import(const CUipcMemHandle &in, std::uint64_t &ptr)
{
	IpcHandle h;
	std::memcpy(&h, &in, sizeof h);
	if (h.magic != ipc_magic)
		return CUDA_ERROR_INVALID_VALUE;
	char path[64];
	std::snprintf(path, sizeof path, "/proc/%d/fd/%d", h.pid, h.fd);
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return CUDA_ERROR_INVALID_VALUE;
	void *p = mmap(nullptr, round_up(h.size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return CUDA_ERROR_MAP_FAILED;
	ptr = reinterpret_cast<std::uint64_t>(p);
	std::lock_guard g(mu);
	allocations[ptr] = Allocation{h.size, Kind::imported, 0, Origin::mem_alloc, -1, {}, {}};
	return CUDA_SUCCESS;
}

int ipc_close(std::uint64_t ptr)
{
	std::unique_lock g(mu);
	auto it = allocations.find(ptr);
	if (it == allocations.end() || it->second.kind != Kind::imported)
		return CUDA_ERROR_INVALID_VALUE;
	std::uint64_t size = it->second.size;
	allocations.erase(it);
	g.unlock();
	munmap(reinterpret_cast<void *>(ptr), round_up(size));
	return CUDA_SUCCESS;
}

} // namespace fakecuda
