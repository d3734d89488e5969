// The allocation paths the hooks call: back evictable memory with managed
// memory and register it, count the rest, and undo both on free.
#include <cerrno>
#include <mutex>

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
	Registration r = register_and_place(link_, placement_, b, &why, settings().inline_prefetch);
	if (r.prefetch_later)
		executor_.prefetch_later(b, r);
	int err = r.err;
	if (!err || err == -ENOTCONN)
		return CUDA_SUCCESS;	// registered, or will be on the next link
	registry_.take(b->base, b->backing == Backing::vmm);
	const Driver &d = driver();
	if (b->backing == Backing::vmm)
		d.cuMemRelease(b->base);
	else
		d.cuMemFree_v2(b->base);
	return refused(*b, err, why);
}

// While the daemon is away, managed memory that does not fit on the device
// starts on the host, so that a full GPU fails nothing; the daemon, once
// back, has it registered and placed like any other buffer.
void Agent::place_unlinked(Buffer &b)
{
	std::size_t free_bytes = 0, total = 0;
	if (b.engine_id || driver().cuMemGetInfo_v2(&free_bytes, &total) != CUDA_SUCCESS || free_bytes >= b.size)
		return;
	b.started_on_host = placement_.place(b, 0, b.size, false, link_.numa()) == 0;
}

// The application sees what a full GPU would say. A refusal of memory that
// cannot move (-ENOSPC) is explained once per kind, with what to change.
CUresult Agent::refused(const Buffer &b, int err, const std::string &why)
{
	if (err != -ENOSPC) {
		warn("allocation of " + std::to_string(b.size) + " bytes refused: " + why);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	static std::once_flag told[3];
	int kind = b.backing == Backing::vmm ? 0 : b.backing == Backing::pool ? 1 : 2;
	static const char *const cause[3] = {
		"virtual-memory allocations (cuMemCreate, which PyTorch uses with expandable_segments:True)",
		"allocations from a memory pool made for CUDA IPC (or any pool, with GPUOVERSUB_POOLS=device)",
		"plain device memory (allocations under GPUOVERSUB_EVICTABLE_MIN, communication libraries' "
		"buffers, or all of it with GPUOVERSUB_IPC=device)",
	};
	static const char *const remedy[3] = {
		"leave PyTorch's expandable_segments off (PYTORCH_CUDA_ALLOC_CONF without expandable_segments:True)",
		"use a pool without IPC handle types, or cudaMallocAsync",
		"leave GPUOVERSUB_IPC unset unless the job shares CUDA memory between processes",
	};
	std::call_once(told[kind], [&] {
		warn(std::string("out of GPU memory: ") + cause[kind] + " cannot be moved to host RAM, and the job " +
		     "may hold such memory only up to its share of the GPU; this allocation of " +
		     std::to_string(b.size) + " bytes would pass it. To let gpuoversub oversubscribe the job, " +
		     remedy[kind] + "; or ask for a larger share.");
	});
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
	if (CUresult r = require_engine("an allocation", size))
		return r;
	if (want == Want::evictable && (size < settings().evictable_min || settings().ipc_device))
		want = Want::pinned;
	// Evictable memory is managed also while the daemon is away: plain
	// device memory would fail on a full GPU and could never move.
	Backing backing = want == Want::app_managed			  ? Backing::app_managed
			  : want == Want::evictable && link_.expects(dev) ? Backing::managed
									  : Backing::device;
	if (backing == Backing::managed && settings().reserve_bytes) {
		BufferRef b = reserve_.take(dev, ctx, size);
		executor_.nudge();	// a block of this size for the next one
		if (b) {
			*dptr = b->base;
			return CUDA_SUCCESS;
		}
	}
	CUresult r = backing == Backing::app_managed ? d.cuMemAllocManaged(dptr, size, managed_flags)
		     : backing == Backing::managed    ? d.cuMemAllocManaged(dptr, size, CU_MEM_ATTACH_GLOBAL)
						      : d.cuMemAlloc_v2(dptr, size);
	if (r != CUDA_SUCCESS)
		return r;
	auto b = std::make_shared<Buffer>(*dptr, size, dev, ctx, backing);
	r = track(b);
	if (r == CUDA_SUCCESS && backing == Backing::managed)
		place_unlinked(*b);
	return r;
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
	if (CUresult r = require_engine("a stream-ordered allocation", size))
		return r;
	// Managed memory of the agent's instead of a block of the pool, when
	// nothing but this process uses the pool: stream order is kept by
	// freeing late (release_async), so no block is reused before its
	// stream reaches the free. Small blocks stay with the pool, which is
	// cheaper.
	bool replace = (!pool || (settings().evictable_pools && pools_.replaceable(pool, dev))) &&
		       size >= settings().evictable_min && !settings().ipc_device && link_.manages(dev);
	if (replace)
		return allocate(dptr, size, Want::evictable);
	if (CUresult r = real())
		return r;
	return track(std::make_shared<Buffer>(*dptr, size, dev, ctx, Backing::pool));
}

CUresult Agent::pool_create(CUmemoryPool *pool, const CUmemPoolProps *props)
{
	CUresult r = driver().cuMemPoolCreate(pool, props);
	if (r == CUDA_SUCCESS)
		pools_.made(*pool, *props);
	return r;
}

// The driver exports only cuMemAlloc memory (cuda.h): a managed buffer of
// the agent's is refused with the driver's own error, explained once.
CUresult Agent::ipc_handle(CUipcMemHandle *handle, CUdeviceptr dptr)
{
	CUresult r = driver().cuIpcGetMemHandle(handle, dptr);
	BufferRef b = r == CUDA_SUCCESS ? nullptr : registry_.containing(dptr);
	if (b && b->backing == Backing::managed) {
		static std::once_flag told;
		std::call_once(told, [&] {
			warn("cuIpcGetMemHandle failed on a buffer of " + std::to_string(b->size) +
			     " bytes that gpuoversub backs with managed memory, which CUDA IPC cannot share with "
			     "another process (torch.multiprocessing with CUDA tensors needs it). Set "
			     "GPUOVERSUB_IPC=device in the job's environment to keep the job's memory as plain "
			     "device memory: sharing then works, but none of it can be moved to host RAM.");
		});
	}
	return r;
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
	if (BufferRef kept = dptr ? registry_.find(dptr, false) : nullptr) {
		if (kept->dead)
			return CUDA_ERROR_INVALID_VALUE;	// freed already: the reserve's now
		if (reserve_.give_back(kept))
			return CUDA_SUCCESS;
	}
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
		if (CUresult r = require_engine("a VMM allocation", size))
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
	// Linked first: frameworks size themselves from this before allocating.
	bool ask = free_bytes && total_bytes && current_device(dev, ctx) && link();
	auto daemon = link_.daemon();
	if (!ask || !link_.manages(dev) || !daemon ||
	    daemon->meminfo(static_cast<std::uint32_t>(dev), info) != 0)
		return driver().cuMemGetInfo_v2(free_bytes, total_bytes);
	*total_bytes = info.allowed;
	// The reserve is the job's memory but this process's to use.
	*free_bytes = std::min<std::uint64_t>(headroom(info) + reserve_.bytes(dev), info.allowed);
	return CUDA_SUCCESS;
}

} // namespace gos::agent
