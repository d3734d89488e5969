// The fake NVML, libnvidia-ml.so.1 beside the fake driver (in nvml/ of
// its directory, so that only what is pointed there loads it): the calls
// gpuoversubd makes to find its GPUs' MIG instances and their per-process
// usage, over the fake driver's shared state. Test-only, like the fake
// driver.
//
// Where its behaviour comes from: nvml.h of the CUDA toolkit (the
// nvmlDeviceGetComputeRunningProcesses_v3 comment: an infoCount too small
// is NVML_ERROR_INSUFFICIENT_SIZE with the count needed written back; pids
// are the host's; gpuInstanceId and computeInstanceId are 0xFFFFFFFF off
// MIG; nvmlDeviceGetMigDeviceHandleByIndex: NOT_FOUND where no instance
// is; a MIG handle's memory and processes are its instance's, its
// parent's processes those of all its instances), mig.hpp for the MIG
// layout, and the devices' bus ids are the fake driver's
// (cuDeviceGetPCIBusId). A process's usedGpuMemory here leaves out its
// managed pages, as nvidia-smi's per-process figures are reported to; not
// yet measured on a GPU.
#include <cctype>
#include <cstdio>
#include <cstring>

#include "device_state.hpp"
#include "fake_api.hpp"
#include "mig.hpp"

namespace {

enum : int { ok = 0, uninitialized = 1, invalid_argument = 2, not_supported = 3, not_found = 6,
	     insufficient_size = 7 };

struct ProcessInfo {	// nvmlProcessInfo_t (v2/v3)
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
};

struct Memory {		// nvmlMemory_t
	unsigned long long total, free, used;
};

struct PciInfo {	// nvmlPciInfo_t
	char busIdLegacy[16];
	unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[32];
};

// A handle is a physical device's index + 1, or mig_base + a MIG device's
// parent * 16 + index, so that null is never one.
constexpr std::uintptr_t mig_base = 0x100;

void *handle_of(std::uintptr_t h) { return reinterpret_cast<void *>(h); }

int physical_of(void *handle)
{
	auto d = reinterpret_cast<std::uintptr_t>(handle);
	return d >= 1 && d <= static_cast<std::uintptr_t>(fakecuda::physical_count()) ? static_cast<int>(d - 1) : -1;
}

const fakecuda::MigDevice *mig_of(void *handle)
{
	auto d = reinterpret_cast<std::uintptr_t>(handle);
	return d >= mig_base ? fakecuda::mig_at(static_cast<int>((d - mig_base) / 16), static_cast<int>((d - mig_base) % 16))
			     : nullptr;
}

bool started;

// Adds slot's processes to out, each with its instance's ids (0xFFFFFFFF
// off MIG); returns how many there are.
int list_processes(int slot, unsigned gi, unsigned ci, ProcessInfo *out, int room, int have, int only_ci = -1)
{
	fakecuda::ProcessBytes found[256];
	int n = fakecuda::processes(slot, found, 256, only_ci);
	for (int i = 0; i < n && i < 256 && have + i < room; i++)
		out[have + i] = {static_cast<unsigned int>(found[i].pid), found[i].bytes, gi, ci};
	return n;
}

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

FAKE_API int nvmlDeviceGetCount_v2(unsigned int *count)
{
	if (!started)
		return uninitialized;
	if (!count)
		return invalid_argument;
	*count = static_cast<unsigned int>(fakecuda::physical_count());
	return ok;
}

FAKE_API int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void **handle)
{
	if (!started)
		return uninitialized;
	if (!handle || index >= static_cast<unsigned int>(fakecuda::physical_count()))
		return invalid_argument;
	*handle = handle_of(index + 1);
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
	for (int d = 0; d < fakecuda::physical_count(); d++) {
		char id[32];
		std::snprintf(id, sizeof id, "0000:%02x:00.0", 0x40 + d);
		if (std::strcmp(tail, id) == 0) {
			*handle = handle_of(static_cast<std::uintptr_t>(d + 1));
			return ok;
		}
	}
	return not_found;
}

// NVML's form: an 8-digit domain, upper case.
FAKE_API int nvmlDeviceGetPciInfo_v3(void *handle, PciInfo *pci)
{
	if (!started)
		return uninitialized;
	int dev = physical_of(handle);
	if (const fakecuda::MigDevice *mig = mig_of(handle))
		dev = mig->parent;
	if (!pci || dev < 0)
		return invalid_argument;
	*pci = {};
	pci->bus = static_cast<unsigned int>(0x40 + dev);	// under 0x50: two digits
	std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "0000:%02X:00.0", pci->bus & 0xff);
	std::snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:00.0", pci->bus & 0xff);
	return ok;
}

FAKE_API int nvmlDeviceGetUUID(void *handle, char *uuid, unsigned int length)
{
	if (!started)
		return uninitialized;
	int dev = physical_of(handle);
	const fakecuda::MigDevice *mig = mig_of(handle);
	if (!uuid || (dev < 0 && !mig))
		return invalid_argument;
	char id[96];
	if (mig)
		fakecuda::mig_uuid(*mig, id, sizeof id);
	else
		fakecuda::gpu_uuid(dev, id, sizeof id);
	if (std::strlen(id) >= length)
		return insufficient_size;
	std::memcpy(uuid, id, std::strlen(id) + 1);
	return ok;
}

FAKE_API int nvmlDeviceGetMigMode(void *handle, unsigned int *current, unsigned int *pending)
{
	if (!started)
		return uninitialized;
	int dev = physical_of(handle);
	if (!current || !pending || dev < 0)
		return mig_of(handle) ? not_supported : invalid_argument;
	*current = *pending = fakecuda::mig_enabled(dev) ? 1 : 0;
	return ok;
}

FAKE_API int nvmlDeviceGetMaxMigDeviceCount(void *handle, unsigned int *count)
{
	if (!started)
		return uninitialized;
	int dev = physical_of(handle);
	if (!count || dev < 0)
		return invalid_argument;
	*count = fakecuda::mig_enabled(dev) ? fakecuda::max_mig_per_gpu : 0;
	return ok;
}

FAKE_API int nvmlDeviceGetMigDeviceHandleByIndex(void *handle, unsigned int index, void **mig)
{
	if (!started)
		return uninitialized;
	int dev = physical_of(handle);
	if (!mig || dev < 0 || !fakecuda::mig_enabled(dev) || index >= fakecuda::max_mig_per_gpu)
		return invalid_argument;
	const fakecuda::MigDevice *m = fakecuda::mig_at(dev, static_cast<int>(index));
	if (!m)
		return not_found;
	*mig = handle_of(mig_base + static_cast<std::uintptr_t>(m->parent * 16 + m->index));
	return ok;
}

FAKE_API int nvmlDeviceGetGpuInstanceId(void *handle, unsigned int *id)
{
	if (!started)
		return uninitialized;
	const fakecuda::MigDevice *mig = mig_of(handle);
	if (!id || !mig)
		return physical_of(handle) >= 0 ? not_supported : invalid_argument;
	*id = mig->gpu_instance;
	return ok;
}

FAKE_API int nvmlDeviceGetMemoryInfo(void *handle, Memory *memory)
{
	if (!started)
		return uninitialized;
	int dev = physical_of(handle);
	const fakecuda::MigDevice *mig = mig_of(handle);
	if (!memory || (dev < 0 && !mig))
		return invalid_argument;
	fakecuda::DeviceUsage u = fakecuda::slot_usage(mig ? mig->slot : dev);
	*memory = {u.capacity, u.capacity - (u.used < u.capacity ? u.used : u.capacity), u.used};
	return ok;
}

FAKE_API int nvmlDeviceGetComputeRunningProcesses_v3(void *handle, unsigned int *count, ProcessInfo *infos)
{
	if (!started)
		return uninitialized;
	int dev = physical_of(handle);
	const fakecuda::MigDevice *mig = mig_of(handle);
	if ((dev < 0 && !mig) || !count || (*count && !infos))
		return invalid_argument;
	// As NVML says of a count too small: only the count needed comes back,
	// never a part of the table.
	constexpr int most = 512;
	static thread_local ProcessInfo all[most];
	int needed = 0;
	if (mig) {
		needed = list_processes(mig->slot, mig->gpu_instance, mig->compute_instance, all, most, 0,
					static_cast<int>(mig->compute_instance));
	} else if (fakecuda::mig_enabled(dev)) {
		for (int i = 0; i < fakecuda::max_mig_per_gpu; i++)
			if (const fakecuda::MigDevice *m = fakecuda::mig_at(dev, i); m && m->compute_instance == 0)
				needed += list_processes(m->slot, m->gpu_instance, 0, all, most, needed);
	} else {
		needed = list_processes(dev, 0xFFFFFFFFu, 0xFFFFFFFFu, all, most, 0);
	}
	unsigned room = *count;
	*count = static_cast<unsigned int>(needed);
	if (static_cast<unsigned int>(needed) > room)
		return insufficient_size;
	for (int i = 0; i < needed && i < most; i++)
		infos[i] = all[i];
	return ok;
}
