// The allocation paths the hooks call: back evictable memory with managed
// memory and register it, count the rest, and undo both on free.
#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>

#include "agent.hpp"
#include "driver.hpp"
#include "settings.hpp"

namespace gos::agent {

bool Agent::current_device(CUdevice &dev, CUcontext &ctx) const
{
	const Driver &d = driver();
	return d.cuCtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx && d.cuCtxGetDevice(&dev) == CUDA_SUCCESS;
}

CUresult Agent::refuse(const char *what, std::size_t size)
{
	warn(std::string("GPUOVERSUB_REQUIRED=1 and the engine is not available: refusing ") + what + " of " +
	     std::to_string(size) + " bytes");
	return CUDA_ERROR_NOT_PERMITTED;
}

// Records b and registers it; frees it again when the engine refuses it.
CUresult Agent::track(const BufferRef &b)
{
	registry_.add(b);
	if (!manages(b->dev))
		return CUDA_SUCCESS;
	std::string why;
	int err = register_buffer(b, &why);
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
	reap_deferred(false);
	bool linked = ensure_link();
	if (!linked && settings().required)
		return refuse("an allocation", size);
	if (want == Want::evictable && size < settings().evictable_min)
		want = Want::pinned;
	auto b = std::make_shared<Buffer>();
	CUresult r;
	if (want == Want::app_managed) {
		r = d.cuMemAllocManaged(dptr, size, managed_flags);
		b->backing = Backing::app_managed;
	} else if (want == Want::evictable && manages(dev)) {
		r = d.cuMemAllocManaged(dptr, size, CU_MEM_ATTACH_GLOBAL);
		b->backing = Backing::managed;
	} else {
		r = d.cuMemAlloc_v2(dptr, size);
		b->backing = Backing::device;
	}
	if (r != CUDA_SUCCESS)
		return r;
	b->base = *dptr;
	b->size = size;
	b->dev = dev;
	b->ctx = ctx;
	return track(b);
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
	bool linked = ensure_link();
	if (!linked && settings().required)
		return refuse("a pool allocation", size);
	if (CUresult r = real())
		return r;
	auto b = std::make_shared<Buffer>();
	b->base = *dptr;
	b->size = size;
	b->dev = dev;
	b->ctx = ctx;
	b->backing = Backing::pool;
	return track(b);
}

CUresult Agent::release(CUdeviceptr dptr)
{
	const Driver &d = driver();
	BufferRef b = dptr ? registry_.take(dptr, false) : nullptr;
	if (!b)
		return d.cuMemFree_v2(dptr);
	std::unique_lock op(b->op);	// waits for an order running on it
	CUresult r = d.cuMemFree_v2(dptr);
	if (r != CUDA_SUCCESS) {
		op.unlock();
		registry_.add(b);
		return r;
	}
	b->freed = true;
	if (b->engine_id)
		if (auto engine = this->engine())
			engine->free(b->engine_id);
	return CUDA_SUCCESS;
}

CUresult Agent::release_async(CUdeviceptr dptr, CUstream stream, bool per_thread)
{
	const Driver &d = driver();
	BufferRef b = dptr ? registry_.take(dptr, false) : nullptr;
	if (!b)
		return per_thread ? d.cuMemFreeAsync_ptsz(dptr, stream) : d.cuMemFreeAsync(dptr, stream);
	if (b->backing == Backing::pool) {
		CUresult r = per_thread ? d.cuMemFreeAsync_ptsz(dptr, stream) : d.cuMemFreeAsync(dptr, stream);
		if (r != CUDA_SUCCESS) {
			registry_.add(b);
			return r;
		}
		std::lock_guard op(b->op);
		b->freed = true;
		if (b->engine_id)
			if (auto engine = this->engine())
				engine->free(b->engine_id);
		return CUDA_SUCCESS;
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
	{
		std::lock_guard g(deferred_mu_);
		deferred_.push_back({b, done});
	}
	if (!done)
		reap_deferred(false);
	return CUDA_SUCCESS;
}

// Frees deferred buffers whose stream work has finished (all, if wait).
void Agent::reap_deferred(bool wait)
{
	const Driver &d = driver();
	std::vector<Deferred> ready;
	{
		std::lock_guard g(deferred_mu_);
		for (auto it = deferred_.begin(); it != deferred_.end();) {
			bool done = !it->done || d.cuEventQuery(it->done) == CUDA_SUCCESS ||
				    (wait && d.cuEventQuery(it->done) != CUDA_ERROR_NOT_READY);
			if (done) {
				ready.push_back(*it);
				it = deferred_.erase(it);
			} else {
				++it;
			}
		}
	}
	for (Deferred &f : ready) {
		if (f.done)
			d.cuEventDestroy_v2(f.done);
		std::lock_guard op(f.buffer->op);
		d.cuMemFree_v2(f.buffer->base);
		f.buffer->freed = true;
		if (f.buffer->engine_id)
			if (auto engine = this->engine())
				engine->free(f.buffer->engine_id);
	}
}

CUresult Agent::vmm_create(CUmemGenericAllocationHandle *handle, std::size_t size, const CUmemAllocationProp *prop,
			   unsigned long long flags)
{
	const Driver &d = driver();
	bool on_device = handle && prop && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE;
	bool linked = on_device && ensure_link();
	if (on_device && !linked && settings().required)
		return refuse("a VMM allocation", size);
	CUresult r = d.cuMemCreate(handle, size, prop, flags);
	if (r != CUDA_SUCCESS || !on_device)
		return r;
	auto b = std::make_shared<Buffer>();
	b->base = *handle;
	b->size = size;
	b->dev = prop->location.id;
	b->backing = Backing::vmm;
	return track(b);
}

CUresult Agent::vmm_release(CUmemGenericAllocationHandle handle)
{
	const Driver &d = driver();
	BufferRef b = registry_.take(handle, true);
	CUresult r = d.cuMemRelease(handle);
	if (!b)
		return r;
	if (r != CUDA_SUCCESS) {
		registry_.add(b);
		return r;
	}
	if (b->engine_id)
		if (auto engine = this->engine())
			engine->free(b->engine_id);
	return CUDA_SUCCESS;
}

CUresult Agent::mem_info(std::size_t *free_bytes, std::size_t *total_bytes)
{
	const Driver &d = driver();
	CUdevice dev;
	CUcontext ctx;
	gos_rep_meminfo info{};
	auto engine = this->engine();
	if (!free_bytes || !total_bytes || !current_device(dev, ctx) || !manages(dev) || !engine ||
	    engine->meminfo(static_cast<std::uint32_t>(dev), info) != 0)
		return d.cuMemGetInfo_v2(free_bytes, total_bytes);
	*total_bytes = info.allowed;
	*free_bytes = info.allowed > info.used ? info.allowed - info.used : 0;
	return CUDA_SUCCESS;
}

int Agent::set_priority(std::uint64_t ptr, std::uint64_t len, std::uint32_t prio)
{
	if (prio > GPUOVERSUB_PRIORITY_MAX || !len)
		return -EINVAL;
	BufferRef b = registry_.containing(ptr);
	if (!b)
		return -ENOENT;
	std::uint64_t offset = ptr - b->base;
	if (len > b->size - offset)
		return -EINVAL;
	std::lock_guard op(b->op);
	if (offset == 0 && len == b->size) {
		b->priority = prio;
		b->ranges.clear();
	}
	b->ranges.push_back({offset, len, prio});
	auto engine = this->engine();
	if (!b->engine_id || !engine)
		return 0;	// applied when it is registered
	gos_req_priority req{b->engine_id, offset, len, prio, 0};
	int err = engine->set_priority(req);
	return err == -ENOTCONN ? 0 : err;
}

int Agent::set_priority_of_buffer(std::uint64_t ptr, std::uint32_t prio)
{
	BufferRef b = registry_.containing(ptr);
	return b ? set_priority(b->base, b->size, prio) : -ENOENT;
}

// Callers built against an older header pass a smaller struct: they get
// the fields they know, and size says how many bytes were filled.
int Agent::stats(gpuoversub_usage &caller)
{
	constexpr std::size_t first_version = offsetof(gpuoversub_usage, headroom);
	if (caller.size < first_version)
		return -EINVAL;
	gpuoversub_usage out{};
	out.size = static_cast<std::uint32_t>(std::min<std::size_t>(caller.size, sizeof out));
	out.buffers = registry_.all().size();
	out.evictions = evictions_;
	out.returns = returns_;
	out.bytes_evicted = bytes_evicted_;
	out.bytes_returned = bytes_returned_;
	out.advice = advice_seen_;
	out.pinned_bytes = pinned_bytes_;
	auto engine = this->engine();
	out.managed = engine && connected_ ? 1 : 0;
	// The job's figures on the GPUs this process uses (an MPI rank's own
	// GPU), or on all of the job's if it holds nothing yet.
	std::vector<bool> used(ngpus_, false);
	bool any = false;
	for (const BufferRef &b : registry_.all())
		if (b->engine_id && static_cast<std::uint32_t>(b->dev) < ngpus_)
			any = used[static_cast<std::size_t>(b->dev)] = true;
	for (std::uint32_t gpu = 0; engine && gpu < ngpus_; gpu++) {
		gos_rep_meminfo info{};
		if ((any && !used[gpu]) || engine->meminfo(gpu, info))
			continue;
		out.device_bytes += info.device_bytes;
		out.host_bytes += info.host_bytes;
		out.allowed += info.allowed;
		out.entitlement += info.entitlement;
		out.headroom += headroom(info);
	}
	std::memcpy(&caller, &out, out.size);
	return 0;
}

int Agent::on_advice(gpuoversub_advice_fn fn, void *ctx)
{
	std::lock_guard g(advice_mu_);
	advice_fn_ = fn;
	advice_ctx_ = ctx;
	return 0;
}

} // namespace gos::agent
