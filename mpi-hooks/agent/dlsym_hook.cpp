// The agent's dlsym. Built without sanitizers and always optimized (see
// the Makefile): sanitizer runtimes call dlsym before they are initialized,
// and dlsym(RTLD_NEXT, ...) must reach glibc by a tail call, so that glibc
// sees the application's return address and not the agent's.
#include <dlfcn.h>

#include "driver.hpp"

namespace {

using dlsym_fn = void *(*)(void *, const char *);
dlsym_fn real_fn;

dlsym_fn real()
{
	dlsym_fn f = __atomic_load_n(&real_fn, __ATOMIC_ACQUIRE);
	if (f)
		return f;
	// dlvsym is not interposed; glibc 2.34 moved dlsym into libc.
	void *found = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
	if (!found)
		found = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
	f = reinterpret_cast<dlsym_fn>(found);
	__atomic_store_n(&real_fn, f, __ATOMIC_RELEASE);
	return f;
}

} // namespace

void *gos::agent::real_dlsym(void *handle, const char *name)
{
	dlsym_fn f = real();
	return f ? f(handle, name) : nullptr;
}

GOS_EXPORT void *dlsym(void *handle, const char *name)
{
	dlsym_fn f = real();
	if (!f)
		return nullptr;
	if (handle == RTLD_NEXT || name[0] != 'c' || name[1] != 'u')
		return f(handle, name);
	void *found = f(handle, name);
	if (!found)
		return found;
	void *hook = gos::agent::hook_named(name);
	return hook ? hook : found;
}
