// Logging to stderr with a level prefix journald understands (<N>). Every
// line carries it: a message of several lines (a report's summary) is
// several records of its level, and any other control character in it
// (ESC, BEL, a carriage return) is written as \xNN, so that text a user
// chose can neither hide in nor forge a record. A newline inside a user's
// own text is escaped where it is logged (gos::escaped, text.hpp).
#pragma once

#include <iostream>
#include <sstream>
#include <string>
#include <string_view>

#include "common/util/text.hpp"

namespace gos::log {

enum Level { error = 3, warning = 4, notice = 5, info = 6, debug = 7 };

inline Level &threshold()
{
	static Level l = info;
	return l;
}

// MESSAGE as records of LEVEL: one per line, each prefixed, each ended.
inline std::string records(Level level, std::string_view message)
{
	const std::string prefix = "<" + std::to_string(static_cast<int>(level)) + ">";
	while (!message.empty() && message.back() == '\n')
		message.remove_suffix(1);
	std::string out = prefix;
	for (std::size_t start = 0;;) {
		std::size_t end = message.find('\n', start);
		out += escaped(message.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
		out += '\n';
		if (end == std::string_view::npos)
			return out;
		out += prefix;
		start = end + 1;
	}
}

#define GOS_LOG(level, expr)                                                              \
	do {                                                                              \
		if ((level) <= ::gos::log::threshold()) {                                 \
			std::ostringstream gos_log_os_;                                   \
			gos_log_os_ << expr;                                              \
			std::cerr << ::gos::log::records(level, gos_log_os_.str()) << std::flush; \
		}                                                                         \
	} while (0)

} // namespace gos::log
