// What the job-wide door lets one address cost, the first and cheapest of
// its checks (docs/jobwide.md, "The channel", check 1): connections in all
// and per address, and frames per address as a token bucket. A full
// cluster's parts at once (1,024 senders, each one frame) pass; a
// flood from one address, or from many, is answered `busy` at the cost of
// a map lookup.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/util/rate_limit.hpp"

namespace gos::gpud {

struct DoorSettings {
	std::size_t connections = 256;	// open at once, all addresses
	std::size_t per_address = 4;	// open at once, one address
	double frames_per_s = 16, burst = 64;	// one address's frames
	std::size_t addresses = 4096;	// addresses remembered (their buckets)
};

enum class DoorAdmit {
	ok,
	busy,		// the door's connections are all taken
	busy_address,	// this address's are
	rate,		// this address sent too many frames of late
};
std::string_view name_of(DoorAdmit admit);

class DoorLimits {
public:
	using Clock = std::chrono::steady_clock;

	explicit DoorLimits(DoorSettings settings = {}) : settings_(settings) {}

	// A connection from ADDR: counted when ok, until disconnect(ADDR).
	DoorAdmit connect(const std::string &addr, Clock::time_point now);
	void disconnect(const std::string &addr);
	// A frame on a connection from ADDR (ok or rate).
	DoorAdmit frame(const std::string &addr, Clock::time_point now);

	std::size_t open() const { return open_; }
	std::size_t remembered() const { return sources_.size(); }

private:
	struct Source {
		TokenBucket frames;
		std::size_t open = 0;
		Clock::time_point last{};
	};
	// Room for a new address: forgets those with no connection whose
	// bucket has refilled (a new one is the same); false if none can go.
	bool make_room(Clock::time_point now);

	DoorSettings settings_;
	std::unordered_map<std::string, Source> sources_;
	std::size_t open_ = 0;
};

} // namespace gos::gpud
