// The node's GPUs: found through the CUDA driver API and NVML, both loaded
// with dlopen so the daemon runs (and refuses clearly) where neither
// exists, or declared in the policy as simulated_gpus for tests and demos.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/config/config.hpp"

namespace gos::gpud {

struct Gpu {
	std::uint32_t index = 0;	// node index, in PCI bus order
	std::uint64_t memory = 0;
	std::string pci_bus_id;
	int numa_node = -1;
	bool simulated = false;
	bool nvml = false;	// per-process usage from NVML (a simulated one's where the policy says)
};

struct ProcessUse {
	pid_t pid;
	std::uint64_t bytes;
};

// Per-process GPU memory from NVML, for processes that bypass the agent.
class UsageProbe {
public:
	virtual ~UsageProbe() = default;
	virtual std::vector<ProcessUse> processes(const Gpu &gpu) = 0;
};

struct Discovery {
	std::vector<Gpu> gpus;
	std::unique_ptr<UsageProbe> usage;	// null without NVML
	std::string source;			// "simulated", "CUDA+NVML", "CUDA"
};

// Simulated GPUs when the policy declares them; otherwise the real ones.
// Throws std::runtime_error saying why there is no GPU to manage.
Discovery discover_gpus(const config::Config &cfg);

} // namespace gos::gpud
