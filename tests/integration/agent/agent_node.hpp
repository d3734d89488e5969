// What the agent's integration tests share: a node of one daemon and one
// fake 256 MiB GPU, and the readings they take of it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent_harness.hpp"
#include "tests/integration/daemon/daemon_harness.hpp"

namespace gos_test {

constexpr std::uint64_t MiB = 1ULL << 20;

// A daemon on one simulated 256 MiB GPU (returns every 50 ms; the balloon
// off unless yaml configures it) and the fake GPU behind it.
struct Node {
	explicit Node(const std::string &yaml = "", bool start = true);
	DaemonUnderTest daemon;
	FakeGpu gpu;
};

// A tenant's figure from the daemon's status, 0 when it has none.
std::uint64_t field(const nlohmann::json &t, const char *key);
// The fake driver's log of every call so far.
std::string call_log(const FakeGpu &gpu);
// "usage" from the fake driver: capacity, used, peak, over-capacity peak,
// managed bytes the driver evicted for room (device_state.hpp).
std::vector<std::uint64_t> usage(AppProcess &app);
std::size_t count(const std::string &text, const std::string &what);

} // namespace gos_test
