// The fake driver's entry points: the CUDA driver API subset the agent and
// the test programs use, with cuda.h's own prototypes. Streams are
// synchronous, contexts are the devices' primary contexts, and every call
// that matters for placement is logged (FAKECUDA_LOG).
#include <cuda.h>

#include <cstdio>
#include <cstring>
#include <string_view>

#include "device_state.hpp"
#include "memory.hpp"

#define FAKE_API extern "C" __attribute__((visibility("default")))

using namespace fakecuda;

namespace {

struct Context {
	int dev;
	bool retained;
};

Context primary[max_devices];
thread_local Context *current;
bool initialized;

struct Stream {
	Context *ctx;
};

std::uint64_t dptr(CUdeviceptr p) { return static_cast<std::uint64_t>(p); }

CUresult result(int r) { return static_cast<CUresult>(r); }

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
	std::snprintf(id, static_cast<std::size_t>(len), "0000:%02x:00.0", 0x40 + d);
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
	case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: *v = 1; break;
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

FAKE_API CUresult cuCtxSynchronize() { return current ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT; }

FAKE_API CUresult cuStreamCreate(CUstream *s, unsigned int)
{
	if (!s)
		return CUDA_ERROR_INVALID_VALUE;
	if (!current)
		return CUDA_ERROR_INVALID_CONTEXT;
	*s = reinterpret_cast<CUstream>(new Stream{current});
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuStreamDestroy_v2(CUstream s)
{
	delete reinterpret_cast<Stream *>(s);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuStreamSynchronize(CUstream) { return CUDA_SUCCESS; }

FAKE_API CUresult cuStreamIsCapturing(CUstream, CUstreamCaptureStatus *st)
{
	if (!st)
		return CUDA_ERROR_INVALID_VALUE;
	*st = CU_STREAM_CAPTURE_STATUS_NONE;
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuStreamIsCapturing_ptsz(CUstream s, CUstreamCaptureStatus *st) { return cuStreamIsCapturing(s, st); }

FAKE_API CUresult cuEventCreate(CUevent *e, unsigned int)
{
	if (!e)
		return CUDA_ERROR_INVALID_VALUE;
	*e = reinterpret_cast<CUevent>(new int(0));
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuEventRecord(CUevent e, CUstream) { return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }
FAKE_API CUresult cuEventRecord_ptsz(CUevent e, CUstream s) { return cuEventRecord(e, s); }
FAKE_API CUresult cuEventQuery(CUevent e) { return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }
FAKE_API CUresult cuEventSynchronize(CUevent e) { return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }

FAKE_API CUresult cuEventDestroy_v2(CUevent e)
{
	delete reinterpret_cast<int *>(e);
	return CUDA_SUCCESS;
}

// ---- allocation, every hooked form ----

FAKE_API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t size)
{
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	if (!current)
		return CUDA_ERROR_INVALID_CONTEXT;
	std::uint64_t ptr = 0;
	CUresult r = result(alloc_device(current->dev, size, ptr));
	*p = r == CUDA_SUCCESS ? ptr : 0;
	log_call("cuMemAlloc %#llx %zu -> %d", static_cast<unsigned long long>(ptr), size, r);
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
	if (!p || (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
		return CUDA_ERROR_INVALID_VALUE;
	if (!current)
		return CUDA_ERROR_INVALID_CONTEXT;
	std::uint64_t ptr = 0;
	CUresult r = result(alloc_managed(current->dev, size, ptr));
	*p = r == CUDA_SUCCESS ? ptr : 0;
	log_call("cuMemAllocManaged %#llx %zu -> %d", static_cast<unsigned long long>(ptr), size, r);
	return r;
}

FAKE_API CUresult cuMemFree_v2(CUdeviceptr p)
{
	if (!p)
		return CUDA_SUCCESS;
	CUresult r = result(free_memory(dptr(p)));
	log_call("cuMemFree %#llx -> %d", static_cast<unsigned long long>(p), r);
	return r;
}

FAKE_API CUresult cuMemAllocAsync(CUdeviceptr *p, size_t size, CUstream) { return cuMemAlloc_v2(p, size); }
FAKE_API CUresult cuMemAllocAsync_ptsz(CUdeviceptr *p, size_t size, CUstream s) { return cuMemAllocAsync(p, size, s); }

FAKE_API CUresult cuMemAllocFromPoolAsync(CUdeviceptr *p, size_t size, CUmemoryPool pool, CUstream)
{
	return pool ? cuMemAlloc_v2(p, size) : CUDA_ERROR_INVALID_VALUE;
}

FAKE_API CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *p, size_t size, CUmemoryPool pool, CUstream s)
{
	return cuMemAllocFromPoolAsync(p, size, pool, s);
}

FAKE_API CUresult cuMemFreeAsync(CUdeviceptr p, CUstream) { return cuMemFree_v2(p); }
FAKE_API CUresult cuMemFreeAsync_ptsz(CUdeviceptr p, CUstream s) { return cuMemFreeAsync(p, s); }

FAKE_API CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice d)
{
	if (!pool || d < 0 || d >= device_count())
		return CUDA_ERROR_INVALID_VALUE;
	*pool = reinterpret_cast<CUmemoryPool>(&primary[d]);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t size, const CUmemAllocationProp *prop,
			      unsigned long long flags)
{
	if (!h || !prop || flags)
		return CUDA_ERROR_INVALID_VALUE;
	std::uint64_t handle = 0;
	bool on_device = prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE;
	CUresult r = result(vmm_create(on_device ? prop->location.id : 0, on_device, size, handle));
	*h = handle;
	log_call("cuMemCreate %llu %zu -> %d", static_cast<unsigned long long>(handle), size, r);
	return r;
}

FAKE_API CUresult cuMemRelease(CUmemGenericAllocationHandle h) { return result(vmm_release(h)); }

FAKE_API CUresult cuMemAddressReserve(CUdeviceptr *p, size_t size, size_t, CUdeviceptr, unsigned long long)
{
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	std::uint64_t ptr = 0;
	CUresult r = result(reserve(size, ptr));
	*p = ptr;
	return r;
}

FAKE_API CUresult cuMemAddressFree(CUdeviceptr p, size_t) { return result(free_memory(dptr(p))); }

FAKE_API CUresult cuMemMap(CUdeviceptr p, size_t size, size_t, CUmemGenericAllocationHandle h, unsigned long long flags)
{
	if (!h || flags)
		return CUDA_ERROR_INVALID_VALUE;
	return result(check_range(dptr(p), size));
}

FAKE_API CUresult cuMemUnmap(CUdeviceptr p, size_t size) { return result(check_range(dptr(p), size)); }

FAKE_API CUresult cuMemSetAccess(CUdeviceptr p, size_t size, const CUmemAccessDesc *desc, size_t count)
{
	if (!desc || !count)
		return CUDA_ERROR_INVALID_VALUE;
	return result(check_range(dptr(p), size));
}

FAKE_API CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
	if (!free_bytes || !total)
		return CUDA_ERROR_INVALID_VALUE;
	if (!current)
		return CUDA_ERROR_INVALID_CONTEXT;
	DeviceUsage u = usage(current->dev);
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
	case CU_MEM_ADVISE_UNSET_READ_MOSTLY: r = result(check_range(dptr(p), len)); break;
	default: r = CUDA_ERROR_INVALID_VALUE;
	}
	log_call("cuMemAdvise %#llx %zu advice=%d loc=%s/%d -> %d", static_cast<unsigned long long>(p), len,
		 static_cast<int>(advice), location_name(loc), loc.id, r);
	return r;
}

FAKE_API CUresult cuMemPrefetchAsync_v2(CUdeviceptr p, size_t len, CUmemLocation loc, unsigned int flags, CUstream)
{
	Where to = location_of(loc);
	CUresult r = flags || to == Where::none ? CUDA_ERROR_INVALID_VALUE : result(prefetch(dptr(p), len, to));
	log_call("cuMemPrefetch %#llx %zu to=%s -> %d", static_cast<unsigned long long>(p), len, place_name(to), r);
	return r;
}

FAKE_API CUresult cuMemPrefetchAsync_v2_ptsz(CUdeviceptr p, size_t len, CUmemLocation loc, unsigned int flags,
					     CUstream s)
{
	return cuMemPrefetchAsync_v2(p, len, loc, flags, s);
}

// ---- data: first touch of managed pages populates them ----

FAKE_API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
	if (int r = check_range(dptr(dst), n))
		return result(r);
	touch(dptr(dst), n);
	std::memcpy(reinterpret_cast<void *>(dst), src, n);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
	if (int r = check_range(dptr(src), n))
		return result(r);
	touch(dptr(src), n);
	std::memcpy(dst, reinterpret_cast<const void *>(src), n);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char v, size_t n)
{
	if (int r = check_range(dptr(dst), n))
		return result(r);
	touch(dptr(dst), n);
	std::memset(reinterpret_cast<void *>(dst), v, n);
	return CUDA_SUCCESS;
}

// ---- launches: nothing runs; counted in the call log ----

FAKE_API CUresult cuLaunchKernel(CUfunction f, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,
				 unsigned int, unsigned int, CUstream, void **, void **)
{
	return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

FAKE_API CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
				      unsigned int by, unsigned int bz, unsigned int shm, CUstream s, void **p, void **e)
{
	return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shm, s, p, e);
}

FAKE_API CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **, void **)
{
	return config && f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE_API CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **p, void **e)
{
	return cuLaunchKernelEx(config, f, p, e);
}

FAKE_API CUresult cuGetErrorString(CUresult r, const char **s)
{
	if (!s)
		return CUDA_ERROR_INVALID_VALUE;
	*s = r == CUDA_SUCCESS ? "no error" : r == CUDA_ERROR_OUT_OF_MEMORY ? "out of memory" : "fakecuda error";
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

FAKE_API void fakecuda_usage(int dev, unsigned long long out[4])
{
	DeviceUsage u = usage(dev);
	out[0] = u.capacity;
	out[1] = u.used;
	out[2] = u.peak;
	out[3] = u.over_capacity_peak;
}
