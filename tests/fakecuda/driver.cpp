// The fake driver's entry points: the CUDA driver API subset the agent and
// the test programs use, with cuda.h's own prototypes. This file has
// devices, contexts (the devices' primary contexts), placement, data and
// launches; memory_api.cpp the allocation family, stream_api.cpp streams,
// events and capture. Every call that matters for placement is logged
// (FAKECUDA_LOG).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cost.hpp"
#include "device_state.hpp"
#include "fake_api.hpp"
#include "memory.hpp"
#include "mig.hpp"
#include "streams.hpp"

using namespace fakecuda;

namespace {

struct Context {
	int dev;
	bool retained;
};

Context primary[max_devices];
thread_local Context *current;
bool initialized;

Where location_of(CUmemLocation loc)
{
	switch (loc.type) {
	case CU_MEM_LOCATION_TYPE_DEVICE: return Where::device;
	case CU_MEM_LOCATION_TYPE_HOST:
	case CU_MEM_LOCATION_TYPE_HOST_NUMA:
	case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT: return Where::host;
	default: return Where::none;
	}
}

const char *place_name(Where w) { return w == Where::device ? "device" : w == Where::host ? "host" : "none"; }

// As the call named it: a host node is worth telling apart in the log.
const char *location_name(CUmemLocation loc)
{
	switch (loc.type) {
	case CU_MEM_LOCATION_TYPE_HOST_NUMA: return "host-numa";
	case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT: return "host-numa-current";
	default: return place_name(location_of(loc));
	}
}

} // namespace

int fakecuda::current_device(int &dev)
{
	if (!current)
		return CUDA_ERROR_INVALID_CONTEXT;
	dev = current->dev;
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuInit(unsigned int flags)
{
	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	state_init();
	initialized = true;
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuDriverGetVersion(int *v)
{
	if (!v)
		return CUDA_ERROR_INVALID_VALUE;
	*v = CUDA_VERSION;
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuDeviceGetCount(int *n)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!n)
		return CUDA_ERROR_INVALID_VALUE;
	*n = device_count();
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!d || ordinal < 0 || ordinal >= device_count())
		return CUDA_ERROR_INVALID_DEVICE;
	*d = ordinal;
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
	if (!name || len <= 0 || d < 0 || d >= device_count())
		return CUDA_ERROR_INVALID_VALUE;
	std::snprintf(name, static_cast<std::size_t>(len), "fakecuda device %d", d);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d)
{
	if (!bytes || d < 0 || d >= device_count())
		return CUDA_ERROR_INVALID_VALUE;
	*bytes = usage(d).capacity;
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuDeviceGetPCIBusId(char *id, int len, CUdevice d)
{
	if (!id || len <= 0 || d < 0 || d >= device_count())
		return CUDA_ERROR_INVALID_VALUE;
	// A MIG device has its parent's.
	const MigDevice *mig = mig_in_slot(cuda_slot(d));
	std::snprintf(id, static_cast<std::size_t>(len), "0000:%02x:00.0", 0x40 + (mig ? mig->parent : d));
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute attr, CUdevice d)
{
	if (!v || d < 0 || d >= device_count())
		return CUDA_ERROR_INVALID_VALUE;
	switch (attr) {
	case CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT: *v = 512; break;
	case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
	case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS:
	case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED: *v = 1; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
	default: *v = 0; break;
	}
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice d)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!ctx || d < 0 || d >= device_count())
		return CUDA_ERROR_INVALID_VALUE;
	Context &c = primary[d];
	if (!c.retained) {
		c.dev = d;
		c.retained = true;
		charge(d, context_bytes(), false);
	}
	*ctx = reinterpret_cast<CUcontext>(&c);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
	return d < 0 || d >= device_count() ? CUDA_ERROR_INVALID_DEVICE : CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxSetCurrent(CUcontext ctx)
{
	current = reinterpret_cast<Context *>(ctx);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxGetCurrent(CUcontext *ctx)
{
	if (!ctx)
		return CUDA_ERROR_INVALID_VALUE;
	*ctx = reinterpret_cast<CUcontext>(current);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxPushCurrent_v2(CUcontext ctx) { return cuCtxSetCurrent(ctx); }

FAKE_API CUresult cuCtxPopCurrent_v2(CUcontext *ctx)
{
	if (ctx)
		*ctx = reinterpret_cast<CUcontext>(current);
	current = nullptr;
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxGetDevice(CUdevice *d)
{
	if (!d)
		return CUDA_ERROR_INVALID_VALUE;
	if (!current)
		return CUDA_ERROR_INVALID_CONTEXT;
	*d = current->dev;
	return CUDA_SUCCESS;
}

// ---- placement ----

FAKE_API CUresult cuMemAdvise_v2(CUdeviceptr p, size_t len, CUmem_advise advice, CUmemLocation loc)
{
	CUresult r = CUDA_SUCCESS;
	switch (advice) {
	case CU_MEM_ADVISE_SET_PREFERRED_LOCATION: r = result(prefer(dptr(p), len, location_of(loc))); break;
	case CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION: r = result(prefer(dptr(p), len, Where::none)); break;
	case CU_MEM_ADVISE_SET_ACCESSED_BY:
	case CU_MEM_ADVISE_UNSET_ACCESSED_BY:
	case CU_MEM_ADVISE_SET_READ_MOSTLY:
	case CU_MEM_ADVISE_UNSET_READ_MOSTLY: r = result(check_range(dptr(p), len, false)); break;
	default: r = CUDA_ERROR_INVALID_VALUE;
	}
	pay(Op::advise, 0);
	log_call("cuMemAdvise %#llx %zu advice=%d loc=%s/%d -> %d", static_cast<unsigned long long>(p), len,
		 static_cast<int>(advice), location_name(loc), loc.id, r);
	return r;
}

FAKE_API CUresult cuMemPrefetchAsync_v2(CUdeviceptr p, size_t len, CUmemLocation loc, unsigned int flags, CUstream)
{
	Where to = location_of(loc);
	std::uint64_t moved = 0;
	CUresult r = flags || to == Where::none ? CUDA_ERROR_INVALID_VALUE : result(prefetch(dptr(p), len, to, &moved));
	pay(Op::prefetch, moved);
	log_call("cuMemPrefetch %#llx %zu to=%s -> %d", static_cast<unsigned long long>(p), len, place_name(to), r);
	return r;
}

FAKE_API CUresult cuMemPrefetchAsync_v2_ptsz(CUdeviceptr p, size_t len, CUmemLocation loc, unsigned int flags,
					     CUstream s)
{
	return cuMemPrefetchAsync_v2(p, len, loc, flags, s);
}

// CUDA 13's batched discard (cuda.h): the contents of each range become
// indeterminate and, with the prefetch, the range moves without a copy:
// the model charges the discard per byte and the prefetch per call only.
// Documented: flags must be 0, the legacy stream is refused, and ranges
// are managed memory. FAKECUDA_NO_DISCARD=1 plays a driver that refuses it
// (CUDA_ERROR_NOT_SUPPORTED), as one without concurrent managed access does.
FAKE_API CUresult cuMemDiscardAndPrefetchBatchAsync(CUdeviceptr *dptrs, size_t *sizes, size_t count,
						    CUmemLocation *locs, size_t *loc_idxs, size_t nlocs,
						    unsigned long long flags, CUstream s)
{
	const char *no = std::getenv("FAKECUDA_NO_DISCARD");
	CUresult r = CUDA_SUCCESS;
	if (no && !std::strcmp(no, "1"))
		r = CUDA_ERROR_NOT_SUPPORTED;
	else if (!dptrs || !sizes || !count || !locs || !loc_idxs || nlocs != 1 || loc_idxs[0] != 0 || flags ||
		 s == CU_STREAM_LEGACY || !s || location_of(locs[0]) == Where::none)
		r = CUDA_ERROR_INVALID_VALUE;	// the fake takes one location for the whole batch
	for (size_t i = 0; r == CUDA_SUCCESS && i < count; i++) {
		r = result(discard(dptr(dptrs[i]), sizes[i]));
		if (r == CUDA_SUCCESS)
			r = result(prefetch(dptr(dptrs[i]), sizes[i], location_of(locs[0])));
		pay(Op::discard, sizes[i]);
		pay(Op::prefetch, 0);
	}
	log_call("cuMemDiscardAndPrefetchBatch %zu ranges to=%s -> %d", count,
		 locs && nlocs ? place_name(location_of(locs[0])) : "none", r);
	return r;
}

// ---- data: first touch of managed pages populates them. Synchronous
// copies are potentially unsafe during capture (the CUDA Graphs guide). ----

namespace {

CUresult reach(std::uint64_t ptr, std::size_t n, bool write)
{
	if (int r = unsafe_call())
		return result(r);
	if (int r = check_range(ptr, n, write))
		return result(r);
	touch(ptr, n);
	return CUDA_SUCCESS;
}

} // namespace

FAKE_API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
	CUresult r = reach(dptr(dst), n, true);
	if (r == CUDA_SUCCESS)
		std::memcpy(reinterpret_cast<void *>(dst), src, n);
	return r;
}

FAKE_API CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
	CUresult r = reach(dptr(src), n, false);
	if (r == CUDA_SUCCESS)
		std::memcpy(dst, reinterpret_cast<const void *>(src), n);
	return r;
}

FAKE_API CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char v, size_t n)
{
	CUresult r = reach(dptr(dst), n, true);
	if (r == CUDA_SUCCESS)
		std::memset(reinterpret_cast<void *>(dst), v, n);
	return r;
}

// ---- launches: nothing runs, but the work takes its place in its stream
// (captured instead, on a capturing stream) ----

namespace {

CUresult launch(CUstream s)
{
	StreamRef st = stream_of(s);
	if (!st)
		return CUDA_ERROR_INVALID_HANDLE;
	if (capture_status(st) == CU_STREAM_CAPTURE_STATUS_NONE)
		enqueue(st);
	return CUDA_SUCCESS;
}

} // namespace

FAKE_API CUresult cuLaunchKernel(CUfunction f, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,
				 unsigned int, unsigned int, CUstream s, void **, void **)
{
	return f ? launch(s) : CUDA_ERROR_INVALID_HANDLE;
}

FAKE_API CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
				      unsigned int by, unsigned int bz, unsigned int shm, CUstream s, void **p, void **e)
{
	return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shm, s, p, e);
}

FAKE_API CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **, void **)
{
	return config && f ? launch(config->hStream) : CUDA_ERROR_INVALID_VALUE;
}

FAKE_API CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **p, void **e)
{
	return cuLaunchKernelEx(config, f, p, e);
}

FAKE_API CUresult cuGetErrorString(CUresult r, const char **s)
{
	if (!s)
		return CUDA_ERROR_INVALID_VALUE;
	switch (r) {
	case CUDA_SUCCESS: *s = "no error"; break;
	case CUDA_ERROR_OUT_OF_MEMORY: *s = "out of memory"; break;
	case CUDA_ERROR_INVALID_VALUE: *s = "invalid argument"; break;
	case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: *s = "operation not permitted when stream is capturing"; break;
	default: *s = "fakecuda error"; break;
	}
	return CUDA_SUCCESS;
}

// ---- test-only introspection, looked up with dlsym ----

FAKE_API void fakecuda_residency(CUdeviceptr p, size_t len, unsigned long long *device, unsigned long long *host)
{
	std::uint64_t d = 0, h = 0;
	residency(dptr(p), len, d, h);
	*device = d;
	*host = h;
}

FAKE_API void fakecuda_usage(int dev, unsigned long long out[5])
{
	DeviceUsage u = usage(dev);
	out[0] = u.capacity;
	out[1] = u.used;
	out[2] = u.peak;
	out[3] = u.over_capacity_peak;
	out[4] = u.driver_evicted;
}
