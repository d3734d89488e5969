#include "common/util/units.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace gos {

std::optional<std::uint64_t> parse_size(std::string_view text)
{
	std::size_t end = 0;
	while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.'))
		end++;
	std::string_view number = text.substr(0, end), unit = text.substr(end);
	if (number.empty() || number.front() == '.' || number.back() == '.')
		return std::nullopt;
	double value = 0;
	auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
	if (ec != std::errc() || ptr != number.data() + number.size())
		return std::nullopt;
	if (unit.ends_with("iB"))
		unit.remove_suffix(2);
	else if (unit.ends_with("B") && unit.size() == 2)
		unit.remove_suffix(1);
	double scale = 1;
	if (unit.size() > 1)
		return std::nullopt;
	if (!unit.empty()) {
		switch (std::toupper(static_cast<unsigned char>(unit[0]))) {
		case 'K': scale = 0x1p10; break;
		case 'M': scale = 0x1p20; break;
		case 'G': scale = 0x1p30; break;
		case 'T': scale = 0x1p40; break;
		case 'B': break;
		default: return std::nullopt;
		}
	} else if (number.find('.') != std::string_view::npos) {
		return std::nullopt;	// fractional bytes
	}
	double bytes = std::round(value * scale);
	if (bytes >= 0x1p63)
		return std::nullopt;
	return static_cast<std::uint64_t>(bytes);
}

std::string format_bytes(std::uint64_t bytes)
{
	static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double value = static_cast<double>(bytes);
	int u = 0;
	while (value >= 1024 && u < 4) {
		value /= 1024;
		u++;
	}
	char out[32];
	if (u == 0 || value == std::floor(value))
		std::snprintf(out, sizeof out, "%.0f %s", value, units[u]);
	else
		std::snprintf(out, sizeof out, "%.2f %s", value, units[u]);
	return out;
}

} // namespace gos
