// Byte sizes as people write them ("2M", "40G", "1.5T") and as we print them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gos {

// Binary units: K, M, G, T, optionally followed by "iB" or "B"; a plain
// number is bytes. Fractions are allowed with a unit ("1.5G"). Returns
// nothing for anything else, including overflow.
std::optional<std::uint64_t> parse_size(std::string_view text);

// "1.50 GiB", "512 MiB", "100 B".
std::string format_bytes(std::uint64_t bytes);

} // namespace gos
