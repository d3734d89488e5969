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

// A GPU the daemon manages: a whole GPU, or one MIG instance of a GPU in
// MIG mode (nvml.hpp), which has its own memory and its own tenants, and
// shares its parent's bus id with its siblings.
struct Gpu {
	std::uint32_t index = 0;	// node index, in PCI bus order, a GPU's MIG instances in NVML's
	std::uint64_t memory = 0;
	std::string pci_bus_id;		// a MIG instance's: its parent's
	int numa_node = -1;
	bool simulated = false;
	bool nvml = false;	// per-process usage from NVML (a simulated one's where the policy says)
	std::string uuid{};		// "GPU-…" or "MIG-…"; empty where NVML cannot say (or simulated without one)
	std::string parent_uuid{};	// a MIG instance's parent
	std::uint32_t gpu_instance = 0;	// a MIG instance's GPU instance id
	// A MIG instance's MIG devices, its compute instances, which share its
	// memory: each one's index under the parent (NVML's) and UUID, the
	// first being uuid's. Empty for a whole GPU.
	struct MigDevice {
		unsigned index;
		std::string uuid;
	};
	std::vector<MigDevice> mig_devices{};
};

// A bus id as CUDA writes it ("0000:b1:00.0"), from NVML's 8-digit domain
// or either case.
std::string normalize_bus_id(std::string id);

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
	std::string source;			// "simulated", "CUDA+NVML" (", MIG"), "CUDA"
	std::vector<std::string> notes;		// for the log: what was found amiss, and what was done
};

// Simulated GPUs when the policy declares them; otherwise the real ones.
// Throws std::runtime_error saying why there is no GPU to manage.
Discovery discover_gpus(const config::Config &cfg);

} // namespace gos::gpud
