// What a reload cannot apply: the start settings fixed when the daemon started.
#include "common/config/config.hpp"

namespace gos::config {

std::vector<std::string> restart_only_changes(const StartSettings &running, const StartSettings &next)
{
	std::vector<std::string> changed;
	auto check = [&](bool same, std::string key) {
		if (same)
			return;
		// equal and weighted are one family of the engine's: a reload
		// switches between them (Policy::equal_weights).
		if (key == start_key::fairness)
			key += " (to or from fcfs or static)";
		changed.push_back(key);
	};
#define GOS_START_SETTING(member, key) check(running.member == next.member, key);
#include "common/config/start_settings.def"
	// The cadences are not in the file: they never differ.
	return changed;
}

} // namespace gos::config
