// What each thread's calls on gpuoversubd cost: request frames sent, and
// how many of them the caller waited for (a round trip each; frees and
// activity reports are not waited for). The daemon client counts them as
// it sends; in kernel mode the engine's calls are ioctls, not counted.
// gpuoversub_stats gives the calling thread's counts, so that a test sees
// what one allocation costs.
#pragma once

#include <cstdint>

namespace gos::agent {

struct RequestCount {
	std::uint64_t sent = 0, waited = 0;
};

// The calling thread's counts so far.
RequestCount thread_requests();

} // namespace gos::agent
