#include "daemon/gpud/door_limits.hpp"

namespace gos::gpud {

std::string_view name_of(DoorAdmit admit)
{
	switch (admit) {
	case DoorAdmit::ok:
		return "ok";
	case DoorAdmit::busy:
		return "door_full";
	case DoorAdmit::busy_address:
		return "address_full";
	case DoorAdmit::rate:
		return "rate";
	}
	return "unknown";
}

bool DoorLimits::make_room(Clock::time_point now)
{
	const auto refill = std::chrono::duration<double>(settings_.burst / settings_.frames_per_s);
	for (auto it = sources_.begin(); it != sources_.end();)
		if (it->second.open == 0 && now - it->second.last >= refill)
			it = sources_.erase(it);
		else
			++it;
	return sources_.size() < settings_.addresses;
}

DoorAdmit DoorLimits::connect(const std::string &addr, Clock::time_point now)
{
	if (open_ >= settings_.connections)
		return DoorAdmit::busy;
	auto it = sources_.find(addr);
	if (it == sources_.end()) {
		// The sweep runs only when the map is full: at most once per
		// `addresses` new ones while it frees room, and each refused
		// address costs it again only while the door is flooded.
		if (sources_.size() >= settings_.addresses && !make_room(now))
			return DoorAdmit::busy;
		it = sources_.emplace(addr, Source{TokenBucket(settings_.burst, settings_.frames_per_s)}).first;
	}
	Source &s = it->second;
	if (s.open >= settings_.per_address)
		return DoorAdmit::busy_address;
	s.open++;
	s.last = now;
	open_++;
	return DoorAdmit::ok;
}

void DoorLimits::disconnect(const std::string &addr)
{
	auto it = sources_.find(addr);
	if (it == sources_.end() || it->second.open == 0)
		return;
	it->second.open--;
	open_--;
}

DoorAdmit DoorLimits::frame(const std::string &addr, Clock::time_point now)
{
	auto it = sources_.find(addr);
	if (it == sources_.end() || it->second.open == 0)
		return DoorAdmit::rate;	// a frame on no counted connection: never admitted
	it->second.last = now;
	return it->second.frames.allow(now) ? DoorAdmit::ok : DoorAdmit::rate;
}

} // namespace gos::gpud
