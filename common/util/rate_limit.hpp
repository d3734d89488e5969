// A rate limiter for repeated log lines: the first occurrence is logged at
// once, later ones at most once per interval, each with the number left out
// since, so a flood of the same failure costs one line per interval.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>

namespace gos {

class RateLimit {
public:
	using Clock = std::chrono::steady_clock;

	explicit RateLimit(Clock::duration interval) : interval_(interval) {}

	// Whether to log now: the number of occurrences left out since the last
	// line logged, or nothing when this one is to be left out.
	std::optional<std::uint64_t> allow(Clock::time_point now = Clock::now())
	{
		if (logged_once_ && now - last_ < interval_) {
			++skipped_;
			return std::nullopt;
		}
		logged_once_ = true;
		last_ = now;
		std::uint64_t skipped = skipped_;
		skipped_ = 0;
		return skipped;
	}

private:
	Clock::duration interval_;
	Clock::time_point last_{};
	std::uint64_t skipped_ = 0;
	bool logged_once_ = false;
};

// A token bucket for what one source (a job's log lines, a user's refused
// hellos) may cost: a burst of `burst`, then `per_second` a second; the
// same allow() as RateLimit, so GOS_LOG_LIMITED says how many were left out.
class TokenBucket {
public:
	using Clock = std::chrono::steady_clock;

	TokenBucket(double burst, double per_second) : burst_(burst), rate_(per_second), tokens_(burst) {}

	std::optional<std::uint64_t> allow(Clock::time_point now = Clock::now())
	{
		refill(now);
		if (tokens_ < 1) {
			++skipped_;
			return std::nullopt;
		}
		tokens_ -= 1;
		std::uint64_t skipped = skipped_;
		skipped_ = 0;
		return skipped;
	}

	// Whether allow() would say no now, without taking a token.
	bool spent(Clock::time_point now = Clock::now())
	{
		refill(now);
		return tokens_ < 1;
	}

private:
	void refill(Clock::time_point now)
	{
		if (last_ != Clock::time_point{})
			tokens_ = std::min(burst_, tokens_ + rate_ * std::chrono::duration<double>(now - last_).count());
		last_ = now;
	}

	double burst_, rate_, tokens_;
	Clock::time_point last_{};
	std::uint64_t skipped_ = 0;
};

} // namespace gos

// Logs expr through limit: "… (N more since the last)" when lines were left out.
#define GOS_LOG_LIMITED(limit, level, expr)                                                        \
	do {                                                                                       \
		if (auto gos_skipped_ = (limit).allow())                                           \
			GOS_LOG(level, expr << (*gos_skipped_ ? " (" + std::to_string(*gos_skipped_) + \
								   " more like it since the last line)"    \
							      : std::string()));                      \
	} while (0)
