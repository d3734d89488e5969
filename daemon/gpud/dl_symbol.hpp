// A symbol of a library loaded with dlopen, as the function type the
// caller declares: the driver's and NVML's entry points, whose headers the
// build does without.
#pragma once

#include <dlfcn.h>

namespace gos::gpud {

template <class F>
F dl_symbol(void *lib, const char *name)
{
	return reinterpret_cast<F>(::dlsym(lib, name));
}

} // namespace gos::gpud
