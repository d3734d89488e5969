#include "driver.hpp"

#include <dlfcn.h>

#include <mutex>

namespace gos::agent {

namespace {

template <class F>
bool resolve(void *lib, F &slot, const char *name)
{
	slot = reinterpret_cast<F>(real_dlsym(lib, name));
	return slot != nullptr;
}

Driver load()
{
	Driver d;
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (!lib)
		return d;
	// A hooked entry the driver lacks stays null; its hook says so.
#define GOS_HOOK(api, symbol, since, until, stream, params) resolve(lib, d.symbol, #symbol);
#include "hooks.def"
#undef GOS_HOOK
	bool ok = d.cuMemAlloc_v2 && d.cuMemFree_v2 && d.cuMemAllocManaged;
#define ENTRY(name) ok &= resolve(lib, d.name, #name);
	ENTRY(cuCtxGetCurrent)
	ENTRY(cuCtxPushCurrent_v2)
	ENTRY(cuCtxPopCurrent_v2)
	ENTRY(cuCtxGetDevice)
	ENTRY(cuDeviceGetAttribute)
	ENTRY(cuDeviceGetPCIBusId)
	ENTRY(cuStreamCreate)
	ENTRY(cuStreamSynchronize)
	ENTRY(cuStreamIsCapturing)
	ENTRY(cuEventCreate)
	ENTRY(cuEventRecord)
	ENTRY(cuEventQuery)
	ENTRY(cuEventDestroy_v2)
	ENTRY(cuMemAdvise_v2)
	ENTRY(cuMemPrefetchAsync_v2)
#undef ENTRY
	resolve(lib, d.cuDeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool");
	resolve(lib, d.cuThreadExchangeStreamCaptureMode, "cuThreadExchangeStreamCaptureMode");
	resolve(lib, d.cuMemDiscardAndPrefetchBatchAsync, "cuMemDiscardAndPrefetchBatchAsync");
	d.loaded = ok;
	return d;
}

} // namespace

const Driver &driver()
{
	static const Driver d = load();
	return d;
}

} // namespace gos::agent
