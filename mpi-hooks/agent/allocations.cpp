// The allocation paths the hooks call: back evictable memory with managed
// memory and register it, count the rest, and undo both on free.
#include <cerrno>

#include "agent.hpp"
#include "driver.hpp"
#include "settings.hpp"

namespace gos::agent {
namespace {

bool current_device(CUdevice &dev, CUcontext &ctx)
{
	const Driver &d = driver();
	return d.cuCtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx && d.cuCtxGetDevice(&dev) == CUDA_SUCCESS;
}

} // namespace

// Records b and registers it; frees it again when the engine refuses it.
CUresult Agent::track(const BufferRef &b)
{
	registry_.add(b);
	if (!link_.manages(b->dev))
		return CUDA_SUCCESS;
	std::string why;
	int err = link_.register_buffer(b, &why);
	if (!err || err == -ENOTCONN)
		return CUDA_SUCCESS;	// registered, or will be on the next link
	registry_.take(b->base, b->backing == Backing::vmm);
	const Driver &d = driver();
	if (b->backing == Backing::vmm)
		d.cuMemRelease(b->base);
	else
		d.cuMemFree_v2(b->base);
	warn("allocation of " + std::to_string(b->size) + " bytes refused: " + why);
	return CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult Agent::allocate(CUdeviceptr *dptr, std::size_t size, Want want, unsigned managed_flags)
{
	const Driver &d = driver();
	CUdevice dev;
	CUcontext ctx;
	if (!dptr || !size || !current_device(dev, ctx))	// the driver says what is wrong
		return want == Want::app_managed ? d.cuMemAllocManaged(dptr, size, managed_flags)
						  : d.cuMemAlloc_v2(dptr, size);
	frees_.reap();
	if (CUresult r = admit("an allocation", size))
		return r;
	if (want == Want::evictable && size < settings().evictable_min)
		want = Want::pinned;
	Backing backing = want == Want::app_managed			  ? Backing::app_managed
			  : want == Want::evictable && link_.manages(dev) ? Backing::managed
									  : Backing::device;
	CUresult r = backing == Backing::app_managed ? d.cuMemAllocManaged(dptr, size, managed_flags)
		     : backing == Backing::managed    ? d.cuMemAllocManaged(dptr, size, CU_MEM_ATTACH_GLOBAL)
						      : d.cuMemAlloc_v2(dptr, size);
	if (r != CUDA_SUCCESS)
		return r;
	return track(std::make_shared<Buffer>(*dptr, size, dev, ctx, backing));
}

CUresult Agent::allocate_async(CUdeviceptr *dptr, std::size_t size, CUstream stream, CUmemoryPool pool,
			       bool per_thread)
{
	const Driver &d = driver();
	auto real = [&] {
		if (pool)
			return per_thread ? d.cuMemAllocFromPoolAsync_ptsz(dptr, size, pool, stream)
					  : d.cuMemAllocFromPoolAsync(dptr, size, pool, stream);
		return per_thread ? d.cuMemAllocAsync_ptsz(dptr, size, stream) : d.cuMemAllocAsync(dptr, size, stream);
	};
	CUstreamCaptureStatus capturing = CU_STREAM_CAPTURE_STATUS_NONE;
	CUdevice dev;
	CUcontext ctx;
	// A graph being captured owns its allocations; they are not ours to move.
	if (!dptr || !size || !current_device(dev, ctx) || d.cuStreamIsCapturing(stream, &capturing) != CUDA_SUCCESS ||
	    capturing != CU_STREAM_CAPTURE_STATUS_NONE)
		return real();
	if (!pool)	// stream order is kept by freeing late (release_async)
		return allocate(dptr, size, Want::evictable);
	if (CUresult r = admit("a pool allocation", size))
		return r;
	if (CUresult r = real())
		return r;
	return track(std::make_shared<Buffer>(*dptr, size, dev, ctx, Backing::pool));
}

// The driver's answer r to freeing b, whose op the caller holds: on failure
// b is still the application's, and tracked; else the engine forgets it.
CUresult Agent::after_free(const BufferRef &b, CUresult r)
{
	if (r != CUDA_SUCCESS)
		registry_.add(b);
	else
		link_.freed(*b);
	return r;
}

CUresult Agent::release(CUdeviceptr dptr)
{
	const Driver &d = driver();
	BufferRef b = dptr ? registry_.take(dptr, false) : nullptr;
	if (!b)
		return d.cuMemFree_v2(dptr);
	std::lock_guard op(b->op);	// waits for an order running on it
	return after_free(b, d.cuMemFree_v2(dptr));
}

CUresult Agent::release_async(CUdeviceptr dptr, CUstream stream, bool per_thread)
{
	const Driver &d = driver();
	BufferRef b = dptr ? registry_.take(dptr, false) : nullptr;
	if (!b || b->backing == Backing::pool) {	// stream-ordered memory: the driver's to order
		CUresult r = per_thread ? d.cuMemFreeAsync_ptsz(dptr, stream) : d.cuMemFreeAsync(dptr, stream);
		if (!b)
			return r;
		std::lock_guard op(b->op);
		return after_free(b, r);
	}
	// Our memory is not stream-ordered: free it once the stream's work
	// before this point is done.
	if (per_thread && !stream)
		stream = CU_STREAM_PER_THREAD;
	CUevent done = nullptr;
	if (d.cuEventCreate(&done, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS ||
	    d.cuEventRecord(done, stream) != CUDA_SUCCESS) {
		if (done)
			d.cuEventDestroy_v2(done);
		done = nullptr;
		if (CUresult r = d.cuStreamSynchronize(stream)) {
			registry_.add(b);
			return r;
		}
	}
	frees_.add(b, done);
	if (!done)
		frees_.reap();
	return CUDA_SUCCESS;
}

CUresult Agent::vmm_create(CUmemGenericAllocationHandle *handle, std::size_t size, const CUmemAllocationProp *prop,
			   unsigned long long flags)
{
	const Driver &d = driver();
	bool on_device = handle && prop && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE;
	if (on_device)
		if (CUresult r = admit("a VMM allocation", size))
			return r;
	CUresult r = d.cuMemCreate(handle, size, prop, flags);
	if (r != CUDA_SUCCESS || !on_device)
		return r;
	return track(std::make_shared<Buffer>(*handle, size, prop->location.id, nullptr, Backing::vmm));
}

CUresult Agent::vmm_release(CUmemGenericAllocationHandle handle)
{
	BufferRef b = registry_.take(handle, true);
	CUresult r = driver().cuMemRelease(handle);
	if (!b)
		return r;
	std::lock_guard op(b->op);
	return after_free(b, r);
}

CUresult Agent::mem_info(std::size_t *free_bytes, std::size_t *total_bytes)
{
	CUdevice dev;
	CUcontext ctx;
	gos_rep_meminfo info{};
	auto engine = link_.engine();
	if (!free_bytes || !total_bytes || !current_device(dev, ctx) || !link_.manages(dev) || !engine ||
	    engine->meminfo(static_cast<std::uint32_t>(dev), info) != 0)
		return driver().cuMemGetInfo_v2(free_bytes, total_bytes);
	*total_bytes = info.allowed;
	*free_bytes = headroom(info);
	return CUDA_SUCCESS;
}

} // namespace gos::agent
