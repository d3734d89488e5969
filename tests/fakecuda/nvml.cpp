// The fake NVML, libnvidia-ml.so.1 beside the fake driver (in nvml/ of
// its directory, so that only what is pointed there loads it): the calls
// gpuoversubd makes for per-process usage, over the fake driver's shared
// state. Test-only, like the fake driver.
//
// Where its behaviour comes from: nvml.h of the CUDA toolkit (the
// nvmlDeviceGetComputeRunningProcesses_v3 comment: an infoCount too small
// is NVML_ERROR_INSUFFICIENT_SIZE with the count needed written back; pids
// are the host's; gpuInstanceId and computeInstanceId are 0xFFFFFFFF off
// MIG), and the devices' bus ids are the fake driver's
// (cuDeviceGetPCIBusId). A process's usedGpuMemory here leaves out its
// managed pages, as nvidia-smi's per-process figures are reported to; not
// yet measured on a GPU.
#include <cctype>
#include <cstdio>
#include <cstring>

#include "device_state.hpp"
#include "fake_api.hpp"

namespace {

enum : int { ok = 0, uninitialized = 1, invalid_argument = 2, not_found = 6, insufficient_size = 7 };

struct ProcessInfo {	// nvmlProcessInfo_t (v2/v3)
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
};

// A handle is a device index + 1, so that null is never one.
int device_of(void *handle)
{
	auto d = reinterpret_cast<std::uintptr_t>(handle);
	return d >= 1 && d <= static_cast<std::uintptr_t>(fakecuda::device_count()) ? static_cast<int>(d - 1) : -1;
}

bool started;

} // namespace

FAKE_API int nvmlInit_v2()
{
	fakecuda::state_init();
	started = true;
	return ok;
}

FAKE_API int nvmlShutdown()
{
	started = false;
	return ok;
}

// NVML takes the 8-digit domain and the 4-digit one, in either case.
FAKE_API int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **handle)
{
	if (!started)
		return uninitialized;
	if (!bus || !handle)
		return invalid_argument;
	char want[32] = {};
	std::size_t n = std::strlen(bus);
	if (n >= sizeof want)
		return invalid_argument;
	for (std::size_t i = 0; i < n; i++)
		want[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(bus[i])));
	const char *tail = n == 16 && std::strncmp(want, "0000", 4) == 0 ? want + 4 : want;
	for (int d = 0; d < fakecuda::device_count(); d++) {
		char id[32];
		std::snprintf(id, sizeof id, "0000:%02x:00.0", 0x40 + d);
		if (std::strcmp(tail, id) == 0) {
			*handle = reinterpret_cast<void *>(static_cast<std::uintptr_t>(d + 1));
			return ok;
		}
	}
	return not_found;
}

FAKE_API int nvmlDeviceGetComputeRunningProcesses_v3(void *handle, unsigned int *count, ProcessInfo *infos)
{
	if (!started)
		return uninitialized;
	int dev = device_of(handle);
	if (dev < 0 || !count || (*count && !infos))
		return invalid_argument;
	fakecuda::ProcessBytes found[256];
	int n = fakecuda::processes(dev, found, 256);
	int have = n < 256 ? n : 256;
	if (static_cast<unsigned int>(have) > *count) {
		*count = static_cast<unsigned int>(have);
		return insufficient_size;
	}
	for (int i = 0; i < have; i++)
		infos[i] = {static_cast<unsigned int>(found[i].pid), found[i].bytes, 0xFFFFFFFFu, 0xFFFFFFFFu};
	*count = static_cast<unsigned int>(have);
	return ok;
}
