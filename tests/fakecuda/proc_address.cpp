// cuGetProcAddress for the fake driver: base names resolved to the newest
// variant, and to the per-thread-stream variant when the flags ask, as the
// real driver does. The legacy cuGetProcAddress is served too.
#include <cstring>

#include "fake_api.hpp"

extern "C" {
CUresult cuMemAllocAsync_ptsz(CUdeviceptr *, size_t, CUstream);
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
CUresult cuMemFreeAsync_ptsz(CUdeviceptr, CUstream);
CUresult cuMemPrefetchAsync_v2_ptsz(CUdeviceptr, size_t, CUmemLocation, unsigned int, CUstream);
CUresult cuStreamIsCapturing_ptsz(CUstream, CUstreamCaptureStatus *);
CUresult cuStreamBeginCapture_v2_ptsz(CUstream, CUstreamCaptureMode);
CUresult cuStreamEndCapture_ptsz(CUstream, CUgraph *);
CUresult cuEventRecord_ptsz(CUevent, CUstream);
CUresult cuLaunchKernel_ptsz(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,
			     unsigned int, unsigned int, CUstream, void **, void **);
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *, CUfunction, void **, void **);
}
#undef cuGetProcAddress
FAKE_API CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags);

namespace {

struct Entry {
	const char *name;
	void *fn;
	void *ptsz;
};

template <class F>
void *fn(F *f) { return reinterpret_cast<void *>(f); }

const Entry entries[] = {
	{"cuInit", fn(cuInit), nullptr},
	{"cuDriverGetVersion", fn(cuDriverGetVersion), nullptr},
	{"cuDeviceGetCount", fn(cuDeviceGetCount), nullptr},
	{"cuDeviceGet", fn(cuDeviceGet), nullptr},
	{"cuDeviceGetName", fn(cuDeviceGetName), nullptr},
	{"cuDeviceTotalMem", fn(cuDeviceTotalMem_v2), nullptr},
	{"cuDeviceGetAttribute", fn(cuDeviceGetAttribute), nullptr},
	{"cuDeviceGetPCIBusId", fn(cuDeviceGetPCIBusId), nullptr},
	{"cuDeviceGetDefaultMemPool", fn(cuDeviceGetDefaultMemPool), nullptr},
	{"cuDeviceGetMemPool", fn(cuDeviceGetMemPool), nullptr},
	{"cuDeviceSetMemPool", fn(cuDeviceSetMemPool), nullptr},
	{"cuMemPoolCreate", fn(cuMemPoolCreate), nullptr},
	{"cuMemPoolDestroy", fn(cuMemPoolDestroy), nullptr},
	{"cuMemPoolSetAttribute", fn(cuMemPoolSetAttribute), nullptr},
	{"cuMemPoolGetAttribute", fn(cuMemPoolGetAttribute), nullptr},
	{"cuMemPoolTrimTo", fn(cuMemPoolTrimTo), nullptr},
	{"cuDevicePrimaryCtxRetain", fn(cuDevicePrimaryCtxRetain), nullptr},
	{"cuDevicePrimaryCtxRelease", fn(cuDevicePrimaryCtxRelease_v2), nullptr},
	{"cuCtxSetCurrent", fn(cuCtxSetCurrent), nullptr},
	{"cuCtxGetCurrent", fn(cuCtxGetCurrent), nullptr},
	{"cuCtxPushCurrent", fn(cuCtxPushCurrent_v2), nullptr},
	{"cuCtxPopCurrent", fn(cuCtxPopCurrent_v2), nullptr},
	{"cuCtxGetDevice", fn(cuCtxGetDevice), nullptr},
	{"cuCtxSynchronize", fn(cuCtxSynchronize), nullptr},
	{"cuStreamCreate", fn(cuStreamCreate), nullptr},
	{"cuStreamDestroy", fn(cuStreamDestroy_v2), nullptr},
	{"cuStreamSynchronize", fn(cuStreamSynchronize), nullptr},
	{"cuStreamIsCapturing", fn(cuStreamIsCapturing), fn(cuStreamIsCapturing_ptsz)},
	{"cuStreamQuery", fn(cuStreamQuery), nullptr},
	{"cuStreamWaitEvent", fn(cuStreamWaitEvent), nullptr},
	{"cuStreamBeginCapture", fn(cuStreamBeginCapture_v2), fn(cuStreamBeginCapture_v2_ptsz)},
	{"cuStreamEndCapture", fn(cuStreamEndCapture), fn(cuStreamEndCapture_ptsz)},
	{"cuThreadExchangeStreamCaptureMode", fn(cuThreadExchangeStreamCaptureMode), nullptr},
	{"cuGraphDestroy", fn(cuGraphDestroy), nullptr},
	{"cuEventCreate", fn(cuEventCreate), nullptr},
	{"cuEventRecord", fn(cuEventRecord), fn(cuEventRecord_ptsz)},
	{"cuEventQuery", fn(cuEventQuery), nullptr},
	{"cuEventSynchronize", fn(cuEventSynchronize), nullptr},
	{"cuEventDestroy", fn(cuEventDestroy_v2), nullptr},
	{"cuMemAlloc", fn(cuMemAlloc_v2), nullptr},
	{"cuMemAllocPitch", fn(cuMemAllocPitch_v2), nullptr},
	{"cuMemAllocManaged", fn(cuMemAllocManaged), nullptr},
	{"cuMemFree", fn(cuMemFree_v2), nullptr},
	{"cuMemAllocAsync", fn(cuMemAllocAsync), fn(cuMemAllocAsync_ptsz)},
	{"cuMemAllocFromPoolAsync", fn(cuMemAllocFromPoolAsync), fn(cuMemAllocFromPoolAsync_ptsz)},
	{"cuMemFreeAsync", fn(cuMemFreeAsync), fn(cuMemFreeAsync_ptsz)},
	{"cuMemCreate", fn(cuMemCreate), nullptr},
	{"cuMemRelease", fn(cuMemRelease), nullptr},
	{"cuMemAddressReserve", fn(cuMemAddressReserve), nullptr},
	{"cuMemAddressFree", fn(cuMemAddressFree), nullptr},
	{"cuMemMap", fn(cuMemMap), nullptr},
	{"cuMemUnmap", fn(cuMemUnmap), nullptr},
	{"cuMemSetAccess", fn(cuMemSetAccess), nullptr},
	{"cuMemGetAllocationGranularity", fn(cuMemGetAllocationGranularity), nullptr},
	{"cuIpcGetMemHandle", fn(cuIpcGetMemHandle), nullptr},
	{"cuIpcOpenMemHandle", fn(cuIpcOpenMemHandle_v2), nullptr},
	{"cuIpcCloseMemHandle", fn(cuIpcCloseMemHandle), nullptr},
	{"cuMemGetInfo", fn(cuMemGetInfo_v2), nullptr},
	{"cuMemGetAddressRange", fn(cuMemGetAddressRange_v2), nullptr},
	{"cuMemAdvise", fn(cuMemAdvise_v2), nullptr},
	{"cuMemPrefetchAsync", fn(cuMemPrefetchAsync_v2), fn(cuMemPrefetchAsync_v2_ptsz)},
	{"cuMemDiscardAndPrefetchBatchAsync", fn(cuMemDiscardAndPrefetchBatchAsync), nullptr},
	{"cuMemcpyHtoD", fn(cuMemcpyHtoD_v2), nullptr},
	{"cuMemcpyDtoH", fn(cuMemcpyDtoH_v2), nullptr},
	{"cuMemsetD8", fn(cuMemsetD8_v2), nullptr},
	{"cuGetErrorString", fn(cuGetErrorString), nullptr},
	{"cuLaunchKernel", fn(cuLaunchKernel), fn(cuLaunchKernel_ptsz)},
	{"cuLaunchKernelEx", fn(cuLaunchKernelEx), fn(cuLaunchKernelEx_ptsz)},
};

} // namespace

FAKE_API CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
				      CUdriverProcAddressQueryResult *status)
{
	if (!symbol || !pfn)
		return CUDA_ERROR_INVALID_VALUE;
	*pfn = nullptr;
	void *found = nullptr;
	if (!std::strcmp(symbol, "cuGetProcAddress"))
		found = version >= 12000 ? fn(cuGetProcAddress_v2) : fn(cuGetProcAddress);
	for (const Entry &e : entries)
		if (!found && !std::strcmp(symbol, e.name))
			found = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && e.ptsz ? e.ptsz : e.fn;
	if (status)
		*status = found ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	*pfn = found;
	return found ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

FAKE_API CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
	return cuGetProcAddress_v2(symbol, pfn, version, flags, nullptr);
}
