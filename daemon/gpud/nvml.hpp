// NVML, loaded with dlopen: the node's MIG instances, each GPU's UUID,
// and per-process usage for processes that bypass the agent.
//
// MIG (NVIDIA's MIG user guide; nvml.h): a GPU in MIG mode is split into
// GPU instances, each with its own memory, and those into compute
// instances, which share it. NVML reaches each compute instance, a "MIG
// device", from the parent by index, 0 to nvmlDeviceGetMaxMigDeviceCount,
// with holes (NOT_FOUND) where one was destroyed; a MIG handle answers
// UUID ("MIG-…"), its GPU instance's memory and its own processes. CUDA names an instance
// by its parent's PCI bus id, so a bus id cannot tell instances apart:
// the daemon keeps each GPU instance as a GPU of its own, named by the
// UUIDs of its compute instances.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "daemon/gpud/gpus.hpp"

namespace gos::gpud {

class Nvml final : public UsageProbe {
public:
	// Null where libnvidia-ml.so.1 cannot be loaded or initialised.
	static std::unique_ptr<Nvml> open();
	~Nvml() override;
	Nvml(const Nvml &) = delete;
	Nvml &operator=(const Nvml &) = delete;

	std::vector<ProcessUse> processes(const Gpu &gpu) override;

	struct Mig {
		std::vector<std::string> parents;	// the bus ids of the GPUs in MIG mode
		// Their GPU instances, in bus id then index order, each with its
		// parent's bus id, its memory, its names and its compute instances.
		std::vector<Gpu> instances;
	};
	Mig mig();
	std::string uuid_of(const std::string &pci_bus_id);

	struct Api;

private:
	explicit Nvml(std::unique_ptr<Api> api);
	void *mig_handle(void *parent, const Gpu::MigDevice &d);
	std::vector<ProcessUse> processes_on(void *dev);
	std::unique_ptr<Api> api_;
};

} // namespace gos::gpud
