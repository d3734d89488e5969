// Text a user chose (a node name, a Slurm name, a report's fields) made safe
// for a terminal and a log: control characters (C0 and DEL: ESC, BEL, a
// newline, a carriage return) become \xNN, so none can move root's cursor,
// ring, retitle the terminal or start a forged log record. Header-only:
// the agent and the plugin log too.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace gos {

inline bool is_control(char c)
{
	auto u = static_cast<unsigned char>(c);
	return u < 0x20 || u == 0x7f;
}

inline bool has_control(std::string_view s)
{
	for (char c : s)
		if (is_control(c))
			return true;
	return false;
}

inline std::string escaped(std::string_view s)
{
	std::string out;
	out.reserve(s.size());
	for (char c : s) {
		if (!is_control(c)) {
			out += c;
			continue;
		}
		char hex[5];
		std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(c));
		out += hex;
	}
	return out;
}

} // namespace gos
