// Logging to stderr with a level prefix journald understands (<N>).
#pragma once

#include <iostream>
#include <sstream>

namespace gos::log {

enum Level { error = 3, warning = 4, notice = 5, info = 6, debug = 7 };

inline Level &threshold()
{
	static Level l = info;
	return l;
}

#define GOS_LOG(level, expr)                                                      \
	do {                                                                      \
		if ((level) <= ::gos::log::threshold()) {                         \
			std::ostringstream gos_log_os_;                           \
			gos_log_os_ << "<" << static_cast<int>(level) << ">" << expr << "\n"; \
			std::cerr << gos_log_os_.str() << std::flush;            \
		}                                                                 \
	} while (0)

} // namespace gos::log
