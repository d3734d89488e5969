// The two other ways programs reach the driver: dlsym, and
// cuGetProcAddress, through which the CUDA runtime resolves every entry
// point. Both answer hooked names with the hook.
#include <dlfcn.h>

#include <cstring>

#include "driver.hpp"

using gos::agent::driver;

namespace {

enum class Stream { any, legacy, per_thread };

struct Hook {
	const char *api;
	const char *symbol;
	int since, until;
	Stream stream;
	void *fn;
};

const Hook hooks[] = {
#define GOS_HOOK(api, symbol, since, until, stream, params) \
	{#api, #symbol, since, until, Stream::stream, reinterpret_cast<void *>(&::symbol)},
#include "hooks.def"
#undef GOS_HOOK
};

// The hook for what the driver returned: by address when the driver hands
// out its exported entry points, else by name, version and stream flavour.
void *hook_for(const char *symbol, void *real, int version, cuuint64_t flags)
{
	const gos::agent::Driver &d = driver();
#define GOS_HOOK(api, symbol, since, until, stream, params) \
	if (d.symbol && real == reinterpret_cast<void *>(d.symbol)) \
		return reinterpret_cast<void *>(&::symbol);
#include "hooks.def"
#undef GOS_HOOK
	bool per_thread = flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
	for (const Hook &h : hooks)
		if (!std::strcmp(h.api, symbol) && version >= h.since && version < h.until &&
		    (h.stream == Stream::any || (h.stream == Stream::per_thread) == per_thread))
			return h.fn;
	return nullptr;
}

} // namespace

void *gos::agent::hook_named(const char *symbol)
{
	for (const Hook &h : hooks)
		if (!std::strcmp(h.symbol, symbol))
			return h.fn;
	return nullptr;
}

GOS_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cuda_version, cuuint64_t flags,
					CUdriverProcAddressQueryResult *symbol_status)
{
	const gos::agent::Driver &d = driver();
	if (!d.cuGetProcAddress_v2)
		return CUDA_ERROR_NOT_FOUND;
	CUresult r = d.cuGetProcAddress_v2(symbol, pfn, cuda_version, flags, symbol_status);
	if (r == CUDA_SUCCESS && symbol && pfn && *pfn)
		if (void *hook = hook_for(symbol, *pfn, cuda_version, flags))
			*pfn = hook;
	return r;
}

GOS_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cuda_version, cuuint64_t flags)
{
	const gos::agent::Driver &d = driver();
	if (!d.cuGetProcAddress)
		return CUDA_ERROR_NOT_FOUND;
	CUresult r = d.cuGetProcAddress(symbol, pfn, cuda_version, flags);
	if (r == CUDA_SUCCESS && symbol && pfn && *pfn)
		if (void *hook = hook_for(symbol, *pfn, cuda_version, flags))
			*pfn = hook;
	return r;
}
