// What the fake driver's entry-point files share.
#pragma once

#include <cuda.h>

#include <cstdint>

#define FAKE_API extern "C" __attribute__((visibility("default")))

namespace fakecuda {

inline std::uint64_t dptr(CUdeviceptr p) { return static_cast<std::uint64_t>(p); }
inline CUresult result(int r) { return static_cast<CUresult>(r); }

// The current context's device; CUDA_ERROR_INVALID_CONTEXT if none.
int current_device(int &dev);

} // namespace fakecuda
