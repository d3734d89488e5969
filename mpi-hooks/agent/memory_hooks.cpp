// The exported hooks of the allocation family. Each one goes straight to
// the driver when the agent itself is calling (Reentry) or there is no
// driver, and to the Agent otherwise.
#include "agent.hpp"
#include "caller.hpp"
#include "driver.hpp"
#include "reentry.hpp"

using gos::agent::Agent;
using gos::agent::call_driver;
using gos::agent::Driver;
using gos::agent::driver;
using gos::agent::Reentry;
using gos::agent::Want;

// The real entry point when the agent must stay out of the way, or the
// driver lacks it.
#define PASS_THROUGH(symbol, ...)                                               \
	do {                                                                    \
		if (!driver().symbol || Reentry::active() || !driver().loaded)   \
			return call_driver(&Driver::symbol, __VA_ARGS__);       \
	} while (0)

namespace {

Want evictable_unless_pinned(void *ret)
{
	return gos::agent::from_pinned_library(ret) ? Want::pinned : Want::evictable;
}

} // namespace

GOS_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	PASS_THROUGH(cuMemAlloc_v2, dptr, bytesize);
	Want want = evictable_unless_pinned(__builtin_return_address(0));
	Reentry in;
	return Agent::get().allocate(dptr, bytesize, want);
}

GOS_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height,
				       unsigned int element_size)
{
	PASS_THROUGH(cuMemAllocPitch_v2, dptr, pitch, width, height, element_size);
	if (!dptr || !pitch || !width || !height || (element_size != 4 && element_size != 8 && element_size != 16))
		return CUDA_ERROR_INVALID_VALUE;
	Want want = evictable_unless_pinned(__builtin_return_address(0));
	Reentry in;
	// The driver's rows are aligned to the texture pitch alignment.
	CUdevice dev;
	int align = 512;
	if (driver().cuCtxGetDevice(&dev) == CUDA_SUCCESS)
		driver().cuDeviceGetAttribute(&align, CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT, dev);
	std::size_t a = align > 0 ? static_cast<std::size_t>(align) : 512;
	std::size_t row = (width + a - 1) / a * a;
	if (height > SIZE_MAX / row)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = Agent::get().allocate(dptr, row * height, want);
	if (r == CUDA_SUCCESS)
		*pitch = row;
	return r;
}

GOS_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	PASS_THROUGH(cuMemFree_v2, dptr);
	Reentry in;
	return Agent::get().release(dptr);
}

GOS_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	PASS_THROUGH(cuMemAllocManaged, dptr, bytesize, flags);
	Reentry in;
	return Agent::get().allocate(dptr, bytesize, Want::app_managed, flags);
}

GOS_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream stream)
{
	PASS_THROUGH(cuMemAllocAsync, dptr, bytesize, stream);
	Reentry in;
	return Agent::get().allocate_async(dptr, bytesize, stream, nullptr, false);
}

GOS_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream stream)
{
	PASS_THROUGH(cuMemAllocAsync_ptsz, dptr, bytesize, stream);
	Reentry in;
	return Agent::get().allocate_async(dptr, bytesize, stream, nullptr, true);
}

GOS_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream stream)
{
	PASS_THROUGH(cuMemAllocFromPoolAsync, dptr, bytesize, pool, stream);
	if (!pool)
		return CUDA_ERROR_INVALID_VALUE;
	Reentry in;
	return Agent::get().allocate_async(dptr, bytesize, stream, pool, false);
}

GOS_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
						 CUstream stream)
{
	PASS_THROUGH(cuMemAllocFromPoolAsync_ptsz, dptr, bytesize, pool, stream);
	if (!pool)
		return CUDA_ERROR_INVALID_VALUE;
	Reentry in;
	return Agent::get().allocate_async(dptr, bytesize, stream, pool, true);
}

GOS_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream)
{
	PASS_THROUGH(cuMemFreeAsync, dptr, stream);
	Reentry in;
	return Agent::get().release_async(dptr, stream, false);
}

GOS_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream stream)
{
	PASS_THROUGH(cuMemFreeAsync_ptsz, dptr, stream);
	Reentry in;
	return Agent::get().release_async(dptr, stream, true);
}

GOS_EXPORT CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
	PASS_THROUGH(cuMemPoolCreate, pool, props);
	if (!pool || !props)
		return call_driver(&Driver::cuMemPoolCreate, pool, props);
	Reentry in;
	return Agent::get().pool_create(pool, props);
}

GOS_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
				unsigned long long flags)
{
	PASS_THROUGH(cuMemCreate, handle, size, prop, flags);
	Reentry in;
	return Agent::get().vmm_create(handle, size, prop, flags);
}

GOS_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
	PASS_THROUGH(cuMemRelease, handle);
	Reentry in;
	return Agent::get().vmm_release(handle);
}

// Mapping moves no memory: the handle was counted when it was created.
GOS_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
			     unsigned long long flags)
{
	return call_driver(&Driver::cuMemMap, ptr, size, offset, handle, flags);
}

GOS_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	return call_driver(&Driver::cuMemUnmap, ptr, size);
}

GOS_EXPORT CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes)
{
	PASS_THROUGH(cuMemGetInfo_v2, free_bytes, total_bytes);
	Reentry in;
	return Agent::get().mem_info(free_bytes, total_bytes);
}

GOS_EXPORT CUresult cuIpcGetMemHandle(CUipcMemHandle *handle, CUdeviceptr dptr)
{
	PASS_THROUGH(cuIpcGetMemHandle, handle, dptr);
	Reentry in;
	return Agent::get().ipc_handle(handle, dptr);
}
