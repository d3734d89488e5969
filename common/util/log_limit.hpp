// A message that would repeat on every retry is logged the first time,
// then at most once per period with the count of those held back, so a
// lasting fault (a full report disk) is seen without flooding the log.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace gos {

class LogLimit {
public:
	using clock = std::chrono::steady_clock;
	explicit LogLimit(clock::duration period = std::chrono::minutes(1)) : period_(period) {}

	// Nothing when this occurrence is held back; otherwise how many were
	// held back since the last one logged.
	std::optional<std::uint64_t> pass(clock::time_point now = clock::now())
	{
		if (logged_ && now - last_ < period_) {
			held_++;
			return std::nullopt;
		}
		logged_ = true;
		last_ = now;
		std::uint64_t held = held_;
		held_ = 0;
		return held;
	}

private:
	clock::duration period_;
	clock::time_point last_{};
	bool logged_ = false;
	std::uint64_t held_ = 0;
};

} // namespace gos
