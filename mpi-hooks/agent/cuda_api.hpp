// cuda.h with every variant declared under its own name (the driver's
// exported symbols), and the hooks' declarations from hooks.def.
#pragma once

#ifndef __CUDA_API_VERSION_INTERNAL
#define __CUDA_API_VERSION_INTERNAL	// declare cuMemAlloc_v2 etc. as themselves
#endif
#include <cuda.h>

#define GOS_EXPORT extern "C" __attribute__((visibility("default")))

#define GOS_HOOK(api, symbol, since, until, stream, params) GOS_EXPORT CUresult symbol params;
#include "hooks.def"
#undef GOS_HOOK
