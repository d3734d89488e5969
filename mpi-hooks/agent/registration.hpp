// Registering a buffer with the engine and putting its chunks where the
// engine's reply says, both under the buffer's op, so that no order on it
// runs between the two and nothing more need be asked: one request per
// allocation. After a new link, the same for every buffer allocated while
// there was none.
#pragma once

#include <cstdint>
#include <string>

#include "link.hpp"
#include "placement.hpp"

namespace gos::agent {

struct Registration {
	int err = 0;			// 0, -ENOTCONN (registered on the next link), or the engine's refusal
	bool prefetch_later = false;	// the device part's prefetch is left to the agent's thread:
	std::uint64_t engine_id = 0;	// the buffer as registered,
	std::uint64_t device_bytes = 0;	// its device part, [0, device_bytes),
	std::uint32_t moves = 0;	// and its Buffer::moves then
};

// Registers b (and, the first time on its device, the context's memory)
// and places it; prefetch_now: the device part too, else it is left.
Registration register_and_place(Link &link, Placement &placement, const BufferRef &b, std::string *why,
				bool prefetch_now);
// What was allocated while unlinked, the device's buffers first (the
// engine must count them before it places what waited on the host).
void register_waiting(Link &link, Placement &placement, Registry &registry);

} // namespace gos::agent
