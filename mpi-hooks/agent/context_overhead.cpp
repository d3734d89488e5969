#include "context_overhead.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include "driver.hpp"
#include "settings.hpp"

namespace gos::agent {
namespace {

// The few NVML declarations needed; Debian ships no nvml.h.
using nvmlDevice_t = struct nvmlDevice_st *;
struct nvmlProcessInfo_t {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
};

std::uint64_t measured(int dev)
{
	static void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return 0;
	using init_fn = int (*)();
	using by_bus_fn = int (*)(const char *, nvmlDevice_t *);
	using procs_fn = int (*)(nvmlDevice_t, unsigned int *, nvmlProcessInfo_t *);
	auto init = reinterpret_cast<init_fn>(real_dlsym(lib, "nvmlInit_v2"));
	auto by_bus = reinterpret_cast<by_bus_fn>(real_dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
	auto procs = reinterpret_cast<procs_fn>(real_dlsym(lib, "nvmlDeviceGetComputeRunningProcesses_v3"));
	char bus[32] = {};
	nvmlDevice_t nvdev = nullptr;
	if (!init || !by_bus || !procs || init() != 0 || driver().cuDeviceGetPCIBusId(bus, sizeof bus, dev) != CUDA_SUCCESS ||
	    by_bus(bus, &nvdev) != 0)
		return 0;
	nvmlProcessInfo_t info[64];
	unsigned int n = 64;
	if (procs(nvdev, &n, info) != 0)
		return 0;
	for (unsigned int i = 0; i < n; i++)
		if (info[i].pid == static_cast<unsigned int>(getpid()) && info[i].usedGpuMemory != ~0ULL)
			return info[i].usedGpuMemory;
	return 0;
}

} // namespace

std::uint64_t context_bytes(int dev, std::uint64_t tracked)
{
	if (settings().context_bytes >= 0)
		return static_cast<std::uint64_t>(settings().context_bytes);
	std::uint64_t used = measured(dev);
	return used > tracked ? used - tracked : 0;
}

} // namespace gos::agent
