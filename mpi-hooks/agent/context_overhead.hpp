// How much device memory the CUDA context of this process holds on a
// device, so the engine counts it: GPUOVERSUB_CONTEXT_BYTES when set,
// otherwise NVML's figure for this process less what the agent tracks.
#pragma once

#include <cstdint>

namespace gos::agent {

std::uint64_t context_bytes(int dev, std::uint64_t tracked_device_bytes);

} // namespace gos::agent
