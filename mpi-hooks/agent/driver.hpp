// The real CUDA driver, opened with dlopen (never linked), and the entry
// points the agent calls: the hooked ones through their real addresses, so
// the agent never re-enters its own hooks.
#pragma once

#include "cuda_api.hpp"

namespace gos::agent {

struct Driver {
#define GOS_HOOK(api, symbol, since, until, stream, params) decltype(&::symbol) symbol = nullptr;
#include "hooks.def"
#undef GOS_HOOK
	decltype(&::cuCtxGetCurrent) cuCtxGetCurrent = nullptr;
	decltype(&::cuCtxPushCurrent_v2) cuCtxPushCurrent_v2 = nullptr;
	decltype(&::cuCtxPopCurrent_v2) cuCtxPopCurrent_v2 = nullptr;
	decltype(&::cuCtxGetDevice) cuCtxGetDevice = nullptr;
	decltype(&::cuDeviceGetAttribute) cuDeviceGetAttribute = nullptr;
	decltype(&::cuDeviceGetPCIBusId) cuDeviceGetPCIBusId = nullptr;
	decltype(&::cuStreamCreate) cuStreamCreate = nullptr;
	decltype(&::cuStreamSynchronize) cuStreamSynchronize = nullptr;
	decltype(&::cuStreamIsCapturing) cuStreamIsCapturing = nullptr;
	decltype(&::cuEventCreate) cuEventCreate = nullptr;
	decltype(&::cuEventRecord) cuEventRecord = nullptr;
	decltype(&::cuEventQuery) cuEventQuery = nullptr;
	decltype(&::cuEventDestroy_v2) cuEventDestroy_v2 = nullptr;
	decltype(&::cuMemAdvise_v2) cuMemAdvise_v2 = nullptr;
	decltype(&::cuMemPrefetchAsync_v2) cuMemPrefetchAsync_v2 = nullptr;
	// Optional: drivers before CUDA 11.2 lack them, and the agent copes.
	decltype(&::cuDeviceGetDefaultMemPool) cuDeviceGetDefaultMemPool = nullptr;
	decltype(&::cuThreadExchangeStreamCaptureMode) cuThreadExchangeStreamCaptureMode = nullptr;
	// CUDA 13: dead data moves without a copy; without it, it is migrated.
	decltype(&::cuMemDiscardAndPrefetchBatchAsync) cuMemDiscardAndPrefetchBatchAsync = nullptr;
	bool loaded = false;	// libcuda.so.1 and what the agent itself needs were found
};

// Loads on first use; thread-safe. A process without a driver gets a
// Driver with loaded == false.
const Driver &driver();

// The driver's entry point fn (a member of Driver) called with args, or
// CUDA_ERROR_NOT_FOUND when the driver lacks it.
template <class Fn, class... Args>
CUresult call_driver(Fn Driver::*fn, Args... args)
{
	Fn f = driver().*fn;
	return f ? f(args...) : CUDA_ERROR_NOT_FOUND;
}

// dlsym as glibc has it, bypassing the agent's own dlsym (dlsym_hook.cpp).
void *real_dlsym(void *handle, const char *name);

// The hook exported as symbol, or null (interpose.cpp).
void *hook_named(const char *symbol);

} // namespace gos::agent
