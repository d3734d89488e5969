// gpuoversubd's client as the agent uses it, counting what each thread's
// calls cost: request frames sent to the daemon, and how many of them the
// caller waited for (a round trip each; frees and activity reports are not
// waited for). In kernel mode the engine's calls are ioctls, not counted.
// gpuoversub_stats gives the calling thread's counts, so that a test sees
// what one allocation costs.
#pragma once

#include <cstdint>
#include <memory>

#include "engine_client.hpp"

namespace gos::agent {

struct RequestCount {
	std::uint64_t sent = 0, waited = 0;
};

// The calling thread's counts so far.
RequestCount thread_requests();

std::unique_ptr<EngineClient> counted(std::unique_ptr<EngineClient> inner);

} // namespace gos::agent
