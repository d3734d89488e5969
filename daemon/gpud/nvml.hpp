// NVML, loaded with dlopen: the node's MIG instances, each GPU's UUID,
// and per-process usage for processes that bypass the agent.
//
// MIG (NVIDIA's MIG user guide; nvml.h): a GPU in MIG mode is split into
// instances, each with its own memory. NVML reaches them from the parent
// by index, 0 to nvmlDeviceGetMaxMigDeviceCount, with holes (NOT_FOUND)
// where an instance was destroyed; a MIG handle answers UUID ("MIG-…"),
// memory and processes for its instance alone. CUDA names an instance
// by its parent's PCI bus id, so a bus id cannot tell instances apart:
// the daemon keeps each as a GPU of its own, named by its UUID.
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
	// Every instance of every GPU in MIG mode, in bus id then index order,
	// each with its parent's bus id, its memory and its names.
	std::vector<Gpu> mig_instances();
	std::string uuid_of(const std::string &pci_bus_id);

	struct Api;

private:
	explicit Nvml(std::unique_ptr<Api> api);
	void *handle_of(const Gpu &gpu);
	std::unique_ptr<Api> api_;
};

} // namespace gos::gpud
