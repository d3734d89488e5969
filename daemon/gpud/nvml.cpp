#include "daemon/gpud/nvml.hpp"

#include <dlfcn.h>

#include <algorithm>

#include "daemon/gpud/dl_symbol.hpp"

namespace gos::gpud {

namespace {

// nvmlReturn_t is an int, nvmlDevice_t a pointer.
constexpr int nvml_success = 0;
constexpr int nvml_not_found = 6;
constexpr int nvml_insufficient_size = 7;
constexpr unsigned uuid_size = 96;	// NVML_DEVICE_UUID_V2_BUFFER_SIZE
constexpr unsigned long long not_available = ~0ULL;	// NVML_VALUE_NOT_AVAILABLE

struct ProcessInfo {		// nvmlProcessInfo_t, v2/v3 layout
	unsigned pid;
	unsigned long long used_gpu_memory;
	unsigned gpu_instance_id;
	unsigned compute_instance_id;
};

struct Memory {			// nvmlMemory_t
	unsigned long long total, free, used;
};

struct PciInfo {		// nvmlPciInfo_t
	char bus_id_legacy[16];
	unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
	char bus_id[32];
};

} // namespace

struct Nvml::Api {
	void *lib = nullptr;
	int (*init)() = nullptr;
	int (*count)(unsigned *) = nullptr;
	int (*by_index)(unsigned, void **) = nullptr;
	int (*by_bus)(const char *, void **) = nullptr;
	int (*uuid)(void *, char *, unsigned) = nullptr;
	int (*pci)(void *, PciInfo *) = nullptr;
	int (*mig_mode)(void *, unsigned *, unsigned *) = nullptr;
	int (*mig_max)(void *, unsigned *) = nullptr;
	int (*mig_by_index)(void *, unsigned, void **) = nullptr;
	int (*gpu_instance)(void *, unsigned *) = nullptr;
	int (*memory)(void *, Memory *) = nullptr;
	int (*procs)(void *, unsigned *, ProcessInfo *) = nullptr;

	// The entry points for usage; MIG's are optional (a driver before R450).
	bool usable() const { return init && by_bus && procs; }
	bool has_mig() const
	{
		return count && by_index && uuid && pci && mig_mode && mig_max && mig_by_index && gpu_instance && memory;
	}
};

std::unique_ptr<Nvml> Nvml::open()
{
	auto api = std::make_unique<Api>();
	api->lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!api->lib)
		return nullptr;
	Api &a = *api;
	a.init = dl_symbol<decltype(a.init)>(a.lib, "nvmlInit_v2");
	a.count = dl_symbol<decltype(a.count)>(a.lib, "nvmlDeviceGetCount_v2");
	a.by_index = dl_symbol<decltype(a.by_index)>(a.lib, "nvmlDeviceGetHandleByIndex_v2");
	a.by_bus = dl_symbol<decltype(a.by_bus)>(a.lib, "nvmlDeviceGetHandleByPciBusId_v2");
	a.uuid = dl_symbol<decltype(a.uuid)>(a.lib, "nvmlDeviceGetUUID");
	a.pci = dl_symbol<decltype(a.pci)>(a.lib, "nvmlDeviceGetPciInfo_v3");
	a.mig_mode = dl_symbol<decltype(a.mig_mode)>(a.lib, "nvmlDeviceGetMigMode");
	a.mig_max = dl_symbol<decltype(a.mig_max)>(a.lib, "nvmlDeviceGetMaxMigDeviceCount");
	a.mig_by_index = dl_symbol<decltype(a.mig_by_index)>(a.lib, "nvmlDeviceGetMigDeviceHandleByIndex");
	a.gpu_instance = dl_symbol<decltype(a.gpu_instance)>(a.lib, "nvmlDeviceGetGpuInstanceId");
	a.memory = dl_symbol<decltype(a.memory)>(a.lib, "nvmlDeviceGetMemoryInfo");
	a.procs = dl_symbol<decltype(a.procs)>(a.lib, "nvmlDeviceGetComputeRunningProcesses_v3");
	if (!a.usable() || a.init() != nvml_success) {
		::dlclose(a.lib);
		return nullptr;
	}
	return std::unique_ptr<Nvml>(new Nvml(std::move(api)));
}

Nvml::Nvml(std::unique_ptr<Api> api) : api_(std::move(api)) {}

Nvml::~Nvml() { ::dlclose(api_->lib); }

// A MIG device's handle comes from its parent's at each use: NVML's
// handles of instances go stale when one is destroyed and made again, and
// the index may then hold another, which its UUID tells.
void *Nvml::mig_handle(void *parent, const Gpu::MigDevice &d)
{
	void *mig = nullptr;
	char id[uuid_size] = "";
	if (!api_->has_mig() || api_->mig_by_index(parent, d.index, &mig) != nvml_success ||
	    api_->uuid(mig, id, sizeof id) != nvml_success || d.uuid != id)
		return nullptr;
	return mig;
}

// A count too small is answered with the count needed alone, never a part
// of the table: asked again once with room for that many (and a few
// more), up to a bound, so each GPU costs bounded work a second.
std::vector<ProcessUse> Nvml::processes_on(void *dev)
{
	constexpr unsigned most = 4096;
	std::vector<ProcessInfo> info(256);
	unsigned n = static_cast<unsigned>(info.size());
	int rc = api_->procs(dev, &n, info.data());
	if (rc == nvml_insufficient_size && n <= most) {
		info.resize(n + 16);
		n = static_cast<unsigned>(info.size());
		rc = api_->procs(dev, &n, info.data());
	}
	std::vector<ProcessUse> out;
	if (rc != nvml_success)
		return out;
	for (unsigned i = 0; i < n && i < info.size(); i++)
		if (info[i].used_gpu_memory != not_available)	// what NVML cannot tell, it says so
			out.push_back({static_cast<pid_t>(info[i].pid), info[i].used_gpu_memory});
	return out;
}

std::vector<ProcessUse> Nvml::processes(const Gpu &gpu)
{
	void *dev = nullptr;
	if (api_->by_bus(gpu.pci_bus_id.c_str(), &dev) != nvml_success)
		return {};
	if (gpu.mig_devices.empty())
		return processes_on(dev);
	std::vector<ProcessUse> out;
	for (const Gpu::MigDevice &d : gpu.mig_devices)	// each compute instance's own
		if (void *mig = mig_handle(dev, d))
			for (const ProcessUse &p : processes_on(mig))
				out.push_back(p);
	return out;
}

std::string Nvml::uuid_of(const std::string &pci_bus_id)
{
	void *dev = nullptr;
	char id[uuid_size] = "";
	if (!api_->uuid || api_->by_bus(pci_bus_id.c_str(), &dev) != nvml_success ||
	    api_->uuid(dev, id, sizeof id) != nvml_success)
		return "";
	return id;
}

Nvml::Mig Nvml::mig()
{
	Mig out;
	unsigned n = 0;
	if (!api_->has_mig() || api_->count(&n) != nvml_success)
		return out;
	for (unsigned i = 0; i < n; i++) {
		void *dev = nullptr;
		unsigned current = 0, pending = 0, max = 0;
		char parent[uuid_size] = "";
		PciInfo pci{};
		if (api_->by_index(i, &dev) != nvml_success || api_->mig_mode(dev, &current, &pending) != nvml_success ||
		    !current || api_->pci(dev, &pci) != nvml_success)
			continue;
		pci.bus_id[sizeof pci.bus_id - 1] = 0;
		// In MIG mode, whatever its instances: no job runs on the GPU whole.
		out.parents.push_back(normalize_bus_id(pci.bus_id));
		if (api_->mig_max(dev, &max) != nvml_success || api_->uuid(dev, parent, sizeof parent) != nvml_success)
			continue;
		for (unsigned m = 0; m < max; m++) {
			void *mig = nullptr;
			char id[uuid_size] = "";
			Memory mem{};
			unsigned gi = 0;
			int rc = api_->mig_by_index(dev, m, &mig);
			if (rc == nvml_not_found)
				continue;	// a hole: no instance at this index
			if (rc != nvml_success || api_->uuid(mig, id, sizeof id) != nvml_success ||
			    api_->memory(mig, &mem) != nvml_success || api_->gpu_instance(mig, &gi) != nvml_success)
				continue;
			// A compute instance of a GPU instance already seen shares its memory.
			auto same = std::find_if(out.instances.begin(), out.instances.end(), [&](const Gpu &g) {
				return g.parent_uuid == parent && g.gpu_instance == gi;
			});
			if (same != out.instances.end()) {
				same->mig_devices.push_back({m, id});
				continue;
			}
			Gpu g;
			g.pci_bus_id = out.parents.back();
			g.memory = mem.total;
			g.uuid = id;
			g.parent_uuid = parent;
			g.gpu_instance = gi;
			g.mig_devices.push_back({m, id});
			out.instances.push_back(g);
		}
	}
	return out;
}

} // namespace gos::gpud
