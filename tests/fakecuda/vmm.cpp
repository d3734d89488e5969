// The virtual-memory API. Sources: cuda.h of CUDA 13.0 (documented); the
// granularity, 2 MiB, is what the fake reports, not a measured figure.
// Nothing here has been measured on a GPU yet.
#include "vmm.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <iterator>
#include <map>
#include <mutex>
#include <vector>

#include "device_state.hpp"

namespace fakecuda {
namespace {

struct Handle {
	int dev;
	bool charged;
	std::uint64_t size;
	int fd;
	int mappings = 0;
	bool released = false;
};

struct Mapping {
	std::uint64_t size, handle;
	CUmemAccess_flags access = CU_MEM_ACCESS_FLAGS_PROT_NONE;
};

struct Reservation {
	std::uint64_t size;
	std::map<std::uint64_t, Mapping> maps;	// by address
};

std::mutex mu;
std::map<std::uint64_t, Handle> handles;
std::map<std::uint64_t, Reservation> reservations;
std::uint64_t next_handle = 1;

bool aligned(std::uint64_t n) { return n % vmm_granularity == 0; }

void *at(std::uint64_t ptr) { return reinterpret_cast<void *>(ptr); }

// The reservation holding [ptr, ptr + len); end() if none. Caller holds mu.
std::map<std::uint64_t, Reservation>::iterator reservation_of(std::uint64_t ptr, std::uint64_t len)
{
	auto it = reservations.upper_bound(ptr);
	if (it == reservations.begin())
		return reservations.end();
	--it;
	return ptr + len <= it->first + it->second.size ? it : reservations.end();
}

using MappingRef = std::map<std::uint64_t, Mapping>::iterator;

// The whole mappings that exactly tile [ptr, ptr + len), in order, and
// their reservation; none if they do not. Caller holds mu.
std::pair<Reservation *, std::vector<MappingRef>> tiling(std::uint64_t ptr, std::uint64_t len)
{
	auto r = reservation_of(ptr, len);
	if (r == reservations.end())
		return {};
	std::vector<MappingRef> out;
	std::uint64_t p = ptr;
	while (p < ptr + len) {
		auto m = r->second.maps.find(p);
		if (m == r->second.maps.end())
			return {};
		out.push_back(m);
		p += m->second.size;
	}
	if (p != ptr + len)
		return {};
	return {&r->second, out};
}

// Documented (cuMemRelease): the memory goes when the handle is released
// and no mapping is left. Caller holds mu.
void release_if_done(std::map<std::uint64_t, Handle>::iterator h)
{
	if (!h->second.released || h->second.mappings)
		return;
	if (h->second.charged)
		discharge(h->second.dev, h->second.size);
	close(h->second.fd);
	handles.erase(h);
}

int protection(CUmemAccess_flags f)
{
	return f == CU_MEM_ACCESS_FLAGS_PROT_READWRITE ? PROT_READ | PROT_WRITE
	       : f == CU_MEM_ACCESS_FLAGS_PROT_READ	? PROT_READ
							: PROT_NONE;
}

} // namespace

// Documented: the size a multiple of the granularity; HOST_NUMA_CURRENT
// refused; device memory counts against the device, host memory does not.
// The fake models pinned handles only.
int vmm_create(const CUmemAllocationProp &prop, std::uint64_t size, std::uint64_t &handle)
{
	if (prop.type != CU_MEM_ALLOCATION_TYPE_PINNED)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (!size || !aligned(size))
		return CUDA_ERROR_INVALID_VALUE;
	bool on_device = prop.location.type == CU_MEM_LOCATION_TYPE_DEVICE;
	if (on_device && (prop.location.id < 0 || prop.location.id >= device_count()))
		return CUDA_ERROR_INVALID_DEVICE;
	if (!on_device && prop.location.type != CU_MEM_LOCATION_TYPE_HOST &&
	    prop.location.type != CU_MEM_LOCATION_TYPE_HOST_NUMA)
		return CUDA_ERROR_INVALID_VALUE;
	int dev = on_device ? prop.location.id : 0;
	if (on_device && !charge(dev, size, true))
		return CUDA_ERROR_OUT_OF_MEMORY;
	int fd = memfd_create("fakecuda-vmm", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, static_cast<off_t>(size)) != 0) {
		if (fd >= 0)
			close(fd);
		if (on_device)
			discharge(dev, size);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	std::lock_guard g(mu);
	handle = next_handle++;
	handles[handle] = Handle{dev, on_device, size, fd};
	return CUDA_SUCCESS;
}

// An unknown handle is undefined behaviour (documented); the fake says
// CUDA_ERROR_INVALID_VALUE.
int vmm_release(std::uint64_t handle)
{
	std::lock_guard g(mu);
	auto h = handles.find(handle);
	if (h == handles.end() || h->second.released)
		return CUDA_ERROR_INVALID_VALUE;
	h->second.released = true;
	release_if_done(h);
	return CUDA_SUCCESS;
}

// Address space only: nothing is reachable until mapped.
int vmm_reserve(std::uint64_t size, std::uint64_t &ptr)
{
	if (!size || !aligned(size))
		return CUDA_ERROR_INVALID_VALUE;
	std::uint64_t span = size + vmm_granularity;
	void *p = mmap(nullptr, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return CUDA_ERROR_OUT_OF_MEMORY;
	std::uint64_t base = reinterpret_cast<std::uint64_t>(p);
	std::uint64_t start = (base + vmm_granularity - 1) / vmm_granularity * vmm_granularity;
	if (start > base)
		munmap(p, start - base);
	if (start + size < base + span)
		munmap(at(start + size), base + span - start - size);
	ptr = start;
	std::lock_guard g(mu);
	reservations[ptr] = Reservation{size, {}};
	return CUDA_SUCCESS;
}

// Documented: ptr and size as cuMemAddressReserve gave them. A reservation
// with mappings left in it is refused: the fake's own rule, neither
// documented nor measured.
int vmm_free(std::uint64_t ptr, std::uint64_t size)
{
	std::lock_guard g(mu);
	auto r = reservations.find(ptr);
	if (r == reservations.end() || r->second.size != size || !r->second.maps.empty())
		return CUDA_ERROR_INVALID_VALUE;
	munmap(at(ptr), size);
	reservations.erase(r);
	return CUDA_SUCCESS;
}

// Documented: inside a reservation, on addresses not mapped yet, ptr and
// size multiples of the granularity, offset 0 ("currently must be zero"),
// and within the handle. A mapping starts with no access.
int vmm_map(std::uint64_t ptr, std::uint64_t size, std::uint64_t offset, std::uint64_t handle)
{
	std::lock_guard g(mu);
	auto h = handles.find(handle);
	auto r = reservation_of(ptr, size);
	if (h == handles.end() || h->second.released || r == reservations.end() || !size || !aligned(ptr) ||
	    !aligned(size) || offset || size > h->second.size)
		return CUDA_ERROR_INVALID_VALUE;
	auto next = r->second.maps.lower_bound(ptr);
	bool overlaps = (next != r->second.maps.end() && next->first < ptr + size) ||
			(next != r->second.maps.begin() && std::prev(next)->first + std::prev(next)->second.size > ptr);
	if (overlaps)
		return CUDA_ERROR_INVALID_VALUE;
	if (mmap(at(ptr), size, PROT_NONE, MAP_SHARED | MAP_FIXED, h->second.fd, 0) == MAP_FAILED)
		return CUDA_ERROR_OUT_OF_MEMORY;
	r->second.maps[ptr] = Mapping{size, handle};
	h->second.mappings++;
	return CUDA_SUCCESS;
}

// Documented: only whole mappings are unmapped, never part of one; the
// range becomes a reservation again, and a new mapping there needs access
// granted anew.
int vmm_unmap(std::uint64_t ptr, std::uint64_t size)
{
	std::lock_guard g(mu);
	auto [r, maps] = tiling(ptr, size);
	if (maps.empty())
		return CUDA_ERROR_INVALID_VALUE;
	mmap(at(ptr), size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
	for (auto m : maps) {
		auto h = handles.find(m->second.handle);
		h->second.mappings--;
		r->maps.erase(m);
		release_if_done(h);
	}
	return CUDA_SUCCESS;
}

// Documented: the range must be fully mapped; the access is given per
// device location (host locations on device memory are refused). The fake
// keeps one access per mapping, for whichever device was named last.
int vmm_set_access(std::uint64_t ptr, std::uint64_t size, const CUmemAccessDesc *desc, std::size_t count)
{
	if (!desc || !count)
		return CUDA_ERROR_INVALID_VALUE;
	for (std::size_t i = 0; i < count; i++) {
		if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE)
			return CUDA_ERROR_INVALID_VALUE;
		if (desc[i].location.id < 0 || desc[i].location.id >= device_count())
			return CUDA_ERROR_INVALID_DEVICE;
	}
	std::lock_guard g(mu);
	auto maps = tiling(ptr, size).second;
	if (maps.empty())
		return CUDA_ERROR_INVALID_VALUE;
	for (auto m : maps) {
		m->second.access = desc[count - 1].flags;
		mprotect(at(m->first), m->second.size, protection(m->second.access));
	}
	return CUDA_SUCCESS;
}

int vmm_check_access(std::uint64_t ptr, std::uint64_t len, bool write)
{
	std::lock_guard g(mu);
	auto r = reservation_of(ptr, len);
	if (r == reservations.end())
		return CUDA_ERROR_INVALID_VALUE;
	auto &maps = r->second.maps;
	auto m = maps.upper_bound(ptr);
	if (m == maps.begin())
		return CUDA_ERROR_INVALID_VALUE;
	--m;
	for (std::uint64_t p = ptr; p < ptr + len; ++m) {
		if (m == maps.end() || m->first > p || m->first + m->second.size <= p)
			return CUDA_ERROR_INVALID_VALUE;	// a hole: unmapped
		int need = write ? PROT_READ | PROT_WRITE : PROT_READ;
		if ((protection(m->second.access) & need) != need)
			return CUDA_ERROR_INVALID_VALUE;
		p = m->first + m->second.size;
	}
	return CUDA_SUCCESS;
}

} // namespace fakecuda
