// The fake driver's allocation family: device and managed memory, the
// stream-ordered allocator and its pools, the virtual-memory API and CUDA
// IPC, as entry points over memory.cpp, pools.cpp and vmm.cpp, whose
// comments say where each rule comes from. Every call that matters for
// placement is logged (FAKECUDA_LOG).
#include <mutex>
#include <set>

#include "device_state.hpp"
#include "fake_api.hpp"
#include "memory.hpp"
#include "pools.hpp"
#include "streams.hpp"
#include "vmm.hpp"

using namespace fakecuda;

namespace {

// Graph allocations: made on a capturing stream, owned by the graph.
std::mutex graph_mu;
std::set<std::uint64_t> graph_allocations;

bool forget_graph_allocation(std::uint64_t ptr)
{
	std::lock_guard g(graph_mu);
	return graph_allocations.erase(ptr) != 0;
}

unsigned long long ull(std::uint64_t n) { return static_cast<unsigned long long>(n); }

// cuMemAllocAsync and cuMemAllocFromPoolAsync. Documented: during capture
// the allocation is a node of the graph, owned by it, not by the pool.
CUresult alloc_async(CUdeviceptr *p, size_t size, CUmemoryPool pool, CUstream s, const char *call)
{
	int dev;
	StreamRef st = stream_of(s);
	if (!p || !size || !is_pool(pool))
		return CUDA_ERROR_INVALID_VALUE;
	if (!st)
		return CUDA_ERROR_INVALID_HANDLE;
	if (int err = current_device(dev))
		return result(err);
	std::uint64_t ptr = 0;
	CUresult r;
	switch (capture_status(st)) {
	case CU_STREAM_CAPTURE_STATUS_ACTIVE:
		r = result(alloc_device(dev, size, Origin::graph, ptr));
		if (!r) {
			capture_allocation(st, ptr);
			std::lock_guard g(graph_mu);
			graph_allocations.insert(ptr);
		}
		break;
	case CU_STREAM_CAPTURE_STATUS_INVALIDATED: r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED; break;
	default: r = result(pool_alloc(pool, size, st, ptr)); break;
	}
	*p = r == CUDA_SUCCESS ? ptr : 0;
	log_call("%s %#llx %zu -> %d", call, ull(ptr), size, r);
	return r;
}

} // namespace

FAKE_API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t size)
{
	int dev;
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	if (int err = current_device(dev))
		return result(err);
	if (int err = unsafe_call())
		return result(err);
	std::uint64_t ptr = 0;
	CUresult r = result(alloc_device(dev, size, Origin::mem_alloc, ptr));
	*p = r == CUDA_SUCCESS ? ptr : 0;
	log_call("cuMemAlloc %#llx %zu -> %d", ull(ptr), size, r);
	return r;
}

FAKE_API CUresult cuMemAllocPitch_v2(CUdeviceptr *p, size_t *pitch, size_t width, size_t height, unsigned int elem)
{
	if (!p || !pitch || !width || !height || (elem != 4 && elem != 8 && elem != 16))
		return CUDA_ERROR_INVALID_VALUE;
	*pitch = (width + 511) / 512 * 512;
	return cuMemAlloc_v2(p, *pitch * height);
}

FAKE_API CUresult cuMemAllocManaged(CUdeviceptr *p, size_t size, unsigned int flags)
{
	int dev;
	if (!p || (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
		return CUDA_ERROR_INVALID_VALUE;
	if (int err = current_device(dev))
		return result(err);
	if (int err = unsafe_call())
		return result(err);
	std::uint64_t ptr = 0;
	CUresult r = result(alloc_managed(dev, size, ptr));
	*p = r == CUDA_SUCCESS ? ptr : 0;
	log_call("cuMemAllocManaged %#llx %zu -> %d", ull(ptr), size, r);
	return r;
}

// Documented: cuMemFree also frees stream-ordered allocations, without
// waiting for their streams.
FAKE_API CUresult cuMemFree_v2(CUdeviceptr p)
{
	if (!p)
		return CUDA_SUCCESS;
	if (int err = unsafe_call())
		return result(err);
	forget_graph_allocation(dptr(p));
	CUresult r = pool_free(dptr(p), nullptr) ? CUDA_SUCCESS : result(free_memory(dptr(p)));
	log_call("cuMemFree %#llx -> %d", ull(p), r);
	return r;
}

FAKE_API CUresult cuMemAllocAsync(CUdeviceptr *p, size_t size, CUstream s)
{
	int dev;
	if (int err = current_device(dev))
		return result(err);
	return alloc_async(p, size, current_pool(dev), s, "cuMemAllocAsync");
}

FAKE_API CUresult cuMemAllocAsync_ptsz(CUdeviceptr *p, size_t size, CUstream s) { return cuMemAllocAsync(p, size, s); }

FAKE_API CUresult cuMemAllocFromPoolAsync(CUdeviceptr *p, size_t size, CUmemoryPool pool, CUstream s)
{
	return alloc_async(p, size, pool, s, "cuMemAllocFromPoolAsync");
}

FAKE_API CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *p, size_t size, CUmemoryPool pool, CUstream s)
{
	return cuMemAllocFromPoolAsync(p, size, pool, s);
}

// Documented: during capture only a graph allocation may be freed (a free
// node; the fake, which never launches graphs, frees it at once); else a
// pool allocation goes back to its pool at this point of the stream.
// Memory from cuMemAlloc is freed at once: the fake's choice, neither
// documented nor measured.
FAKE_API CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s)
{
	StreamRef st = stream_of(s);
	if (!st)
		return CUDA_ERROR_INVALID_HANDLE;
	CUresult r;
	switch (capture_status(st)) {
	case CU_STREAM_CAPTURE_STATUS_ACTIVE:
		r = forget_graph_allocation(dptr(p)) ? result(free_memory(dptr(p))) : CUDA_ERROR_INVALID_VALUE;
		break;
	case CU_STREAM_CAPTURE_STATUS_INVALIDATED: r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED; break;
	default:
		forget_graph_allocation(dptr(p));
		r = pool_free(dptr(p), st) ? CUDA_SUCCESS : result(free_memory(dptr(p)));
	}
	log_call("cuMemFreeAsync %#llx -> %d", ull(p), r);
	return r;
}

FAKE_API CUresult cuMemFreeAsync_ptsz(CUdeviceptr p, CUstream s) { return cuMemFreeAsync(p, s); }

// ---- pools ----

FAKE_API CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice d)
{
	if (!pool || d < 0 || d >= device_count())
		return CUDA_ERROR_INVALID_VALUE;
	*pool = default_pool(d);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice d)
{
	if (!pool || d < 0 || d >= device_count())
		return CUDA_ERROR_INVALID_VALUE;
	*pool = current_pool(d);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuDeviceSetMemPool(CUdevice d, CUmemoryPool pool)
{
	if (d < 0 || d >= device_count())
		return CUDA_ERROR_INVALID_DEVICE;
	return result(set_current_pool(d, pool));
}

FAKE_API CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
	if (!pool || !props)
		return CUDA_ERROR_INVALID_VALUE;
	return result(pool_create(*props, *pool));
}

FAKE_API CUresult cuMemPoolDestroy(CUmemoryPool pool) { return result(pool_destroy(pool)); }

FAKE_API CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
	return result(pool_attribute(pool, attr, value, true));
}

FAKE_API CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
	return result(pool_attribute(pool, attr, value, false));
}

FAKE_API CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep) { return result(pool_trim(pool, keep)); }

// ---- the virtual-memory API; documented: flags must be 0 ----

FAKE_API CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t size, const CUmemAllocationProp *prop,
			      unsigned long long flags)
{
	if (!h || !prop || flags)
		return CUDA_ERROR_INVALID_VALUE;
	std::uint64_t handle = 0;
	CUresult r = result(vmm_create(*prop, size, handle));
	*h = handle;
	log_call("cuMemCreate %llu %zu -> %d", ull(handle), size, r);
	return r;
}

FAKE_API CUresult cuMemRelease(CUmemGenericAllocationHandle h) { return result(vmm_release(h)); }

FAKE_API CUresult cuMemAddressReserve(CUdeviceptr *p, size_t size, size_t, CUdeviceptr, unsigned long long flags)
{
	if (!p || flags)
		return CUDA_ERROR_INVALID_VALUE;
	std::uint64_t ptr = 0;
	CUresult r = result(vmm_reserve(size, ptr));
	*p = ptr;
	return r;
}

FAKE_API CUresult cuMemAddressFree(CUdeviceptr p, size_t size) { return result(vmm_free(dptr(p), size)); }

FAKE_API CUresult cuMemMap(CUdeviceptr p, size_t size, size_t offset, CUmemGenericAllocationHandle h,
			   unsigned long long flags)
{
	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = result(vmm_map(dptr(p), size, offset, h));
	log_call("cuMemMap %#llx %zu handle=%llu -> %d", ull(p), size, ull(h), r);
	return r;
}

FAKE_API CUresult cuMemUnmap(CUdeviceptr p, size_t size)
{
	CUresult r = result(vmm_unmap(dptr(p), size));
	log_call("cuMemUnmap %#llx %zu -> %d", ull(p), size, r);
	return r;
}

FAKE_API CUresult cuMemSetAccess(CUdeviceptr p, size_t size, const CUmemAccessDesc *desc, size_t count)
{
	return result(vmm_set_access(dptr(p), size, desc, count));
}

FAKE_API CUresult cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
						CUmemAllocationGranularity_flags)
{
	if (!granularity || !prop)
		return CUDA_ERROR_INVALID_VALUE;
	*granularity = vmm_granularity;
	return CUDA_SUCCESS;
}

// ---- what there is ----

FAKE_API CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
	int dev;
	if (!free_bytes || !total)
		return CUDA_ERROR_INVALID_VALUE;
	if (int err = current_device(dev))
		return result(err);
	DeviceUsage u = usage(dev);
	*total = u.capacity;
	*free_bytes = u.used < u.capacity ? u.capacity - u.used : 0;
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
	std::uint64_t b = 0, s = 0;
	CUresult r = result(address_range(dptr(p), b, s));
	if (base)
		*base = b;
	if (size)
		*size = s;
	return r;
}

// ---- CUDA IPC ----

FAKE_API CUresult cuIpcGetMemHandle(CUipcMemHandle *handle, CUdeviceptr p)
{
	if (!handle)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = result(ipc_export(dptr(p), *handle));
	log_call("cuIpcGetMemHandle %#llx -> %d", ull(p), r);
	return r;
}

FAKE_API CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *p, CUipcMemHandle handle, unsigned int)
{
	int dev;
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	if (int err = current_device(dev))
		return result(err);
	std::uint64_t ptr = 0;
	CUresult r = result(ipc_import(handle, ptr));
	*p = ptr;
	return r;
}

FAKE_API CUresult cuIpcCloseMemHandle(CUdeviceptr p) { return result(ipc_close(dptr(p))); }
