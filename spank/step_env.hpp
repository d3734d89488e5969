// Reading and writing a step's environment: the node GPUs Slurm gave it,
// and LD_PRELOAD with the agent in front.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status/status.hpp"

namespace gos::spank {

// "0,2-3" -> {0, 2, 3}; nothing for an empty or malformed list.
std::optional<std::vector<std::uint32_t>> parse_gpu_list(std::string_view text);

// Whether CUDA_VISIBLE_DEVICES names GPUs by UUID, as Slurm writes it on a
// node with MIG (gres.c: the flag is the node's GPUs', so whole GPUs
// there are "GPU-<uuid>"): "MIG-<uuid>", or "MIG-GPU-<uuid>/<GI>/<CI>"
// before driver 470.42.01. Slurm's GPU indexes then count instances in
// its own order (whole GPUs first), not the daemon's; the UUIDs name them
// alike.
bool names_by_uuid(std::string_view visible);

// The node indexes of the GPUs such a list names, in its order, from the
// daemon's GPUs (a compute instance names its GPU instance); a "GPU-" name may be shortened to a prefix that is
// unique, as CUDA allows. Nothing when one is not among them: the step
// is better unregistered than registered on another GPU.
std::optional<std::vector<std::uint32_t>> gpus_by_uuid(std::string_view visible,
							const std::vector<status::GpuStatus> &gpus);

// existing LD_PRELOAD with libs in front, each once.
std::string preload_with(std::string_view existing, const std::vector<std::string> &libs);

} // namespace gos::spank
