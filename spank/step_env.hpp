// Reading and writing a step's environment: the node GPUs Slurm gave it,
// and LD_PRELOAD with the agent in front.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gos::spank {

// "0,2-3" -> {0, 2, 3}; nothing for an empty or malformed list.
std::optional<std::vector<std::uint32_t>> parse_gpu_list(std::string_view text);

// existing LD_PRELOAD with libs in front, each once.
std::string preload_with(std::string_view existing, const std::vector<std::string> &libs);

} // namespace gos::spank
