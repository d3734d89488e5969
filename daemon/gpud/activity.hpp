// The balloon's record of one job on one GPU: whether it launched work in
// each of its last periods.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <optional>

namespace gos::gpud {

class ActivityWindow {
public:
	static constexpr unsigned periods = 8;

	// Records one period. Returns the fraction of active periods once a full
	// window has been seen: a job still loading its data has launched nothing
	// yet, and periods before it existed are no evidence of idling.
	std::optional<double> observe(bool launched)
	{
		bits_ = ((bits_ << 1) | launched) & mask;
		seen_ = std::min(seen_ + 1, periods);
		if (seen_ < periods)
			return std::nullopt;
		return std::popcount(bits_) / double(periods);
	}

private:
	static constexpr std::uint32_t mask = (1u << periods) - 1;
	std::uint32_t bits_ = 0;
	unsigned seen_ = 0;
};

} // namespace gos::gpud
