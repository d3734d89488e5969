// Text a user chose (a node name, a Slurm name, a report's fields) made safe
// for a terminal, a log and a JSON record. Safe text is valid UTF-8 (shortest
// form, no surrogates) without control characters: C0 and DEL (ESC, BEL, a
// newline), C1 (U+0080 to U+009F: a terminal may read U+009B as CSI, the
// start of an escape sequence) and the bidirectional marks and overrides,
// which make a terminal show text in another order than it is stored. The
// doors refuse unsafe names (safe_text); what is printed or logged anyway
// has each byte of an unsafe or invalid sequence written as \xNN (escaped),
// so none can move root's cursor, retitle the terminal, forge a log record
// or make a JSON writer fail. Header-only: the agent and the plugin log too.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>

namespace gos {

// One UTF-8 sequence: its code point and length in bytes; a length of 0
// where the byte at `at` starts no valid sequence.
struct CodePoint {
	char32_t value;
	std::size_t length;
};

inline CodePoint code_point_at(std::string_view s, std::size_t at)
{
	auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
	unsigned char lead = byte(at);
	if (lead < 0x80)
		return {lead, 1};
	std::size_t length;
	char32_t value, least;
	if ((lead & 0xe0) == 0xc0)
		length = 2, value = lead & 0x1f, least = 0x80;
	else if ((lead & 0xf0) == 0xe0)
		length = 3, value = lead & 0x0f, least = 0x800;
	else if ((lead & 0xf8) == 0xf0)
		length = 4, value = lead & 0x07, least = 0x10000;
	else
		return {0, 0};
	if (s.size() - at < length)
		return {0, 0};
	for (std::size_t k = 1; k < length; k++) {
		if ((byte(at + k) & 0xc0) != 0x80)
			return {0, 0};
		value = (value << 6) | (byte(at + k) & 0x3f);
	}
	// Overlong forms, UTF-16 surrogates and what lies beyond Unicode.
	if (value < least || value > 0x10ffff || (value >= 0xd800 && value <= 0xdfff))
		return {0, 0};
	return {value, length};
}

inline bool is_control(char32_t c)
{
	return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0x061c || c == 0x200e || c == 0x200f ||
	       (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

// The length of the safe sequence at `at`, or 0.
inline std::size_t safe_length(std::string_view s, std::size_t at)
{
	CodePoint cp = code_point_at(s, at);
	return cp.length && !is_control(cp.value) ? cp.length : 0;
}

inline bool safe_text(std::string_view s)
{
	for (std::size_t at = 0; at < s.size();) {
		std::size_t n = safe_length(s, at);
		if (!n)
			return false;
		at += n;
	}
	return true;
}

inline std::string escaped(std::string_view s)
{
	std::string out;
	out.reserve(s.size());
	for (std::size_t at = 0; at < s.size();) {
		if (std::size_t n = safe_length(s, at)) {
			out.append(s.substr(at, n));
			at += n;
			continue;
		}
		char hex[5];
		std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(s[at++]));
		out += hex;
	}
	return out;
}

} // namespace gos
