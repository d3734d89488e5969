#include "daemon/gpud/gpus.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "daemon/gpud/locality.hpp"

namespace gos::gpud {
namespace {

// The few driver entry points used, declared here so no CUDA header or
// library is needed to build: CUresult and CUdevice are ints.
using cuInit_t = int (*)(unsigned);
using cuDeviceGetCount_t = int (*)(int *);
using cuDeviceGet_t = int (*)(int *, int);
using cuDeviceTotalMem_t = int (*)(std::size_t *, int);
using cuDeviceGetPCIBusId_t = int (*)(char *, int, int);

// NVML: nvmlReturn_t is an int, nvmlDevice_t a pointer.
struct NvmlProcessInfo {		// nvmlProcessInfo_t, v2/v3 layout
	unsigned pid;
	unsigned long long used_gpu_memory;
	unsigned gpu_instance_id;
	unsigned compute_instance_id;
};
using nvmlInit_t = int (*)();
using nvmlDeviceGetHandleByPciBusId_t = int (*)(const char *, void **);
using nvmlDeviceGetComputeRunningProcesses_t = int (*)(void *, unsigned *, NvmlProcessInfo *);

template <class F>
F sym(void *lib, const char *name)
{
	return reinterpret_cast<F>(::dlsym(lib, name));
}

std::string normalize_bus_id(std::string id)
{
	for (char &c : id)
		c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
	// NVML writes an 8-digit domain; CUDA a 4-digit one.
	if (id.size() == 16 && id.compare(0, 4, "0000") == 0)
		id.erase(0, 4);
	return id;
}

class NvmlUsage final : public UsageProbe {
public:
	explicit NvmlUsage(void *lib)
		: lib_(lib), handle_(sym<nvmlDeviceGetHandleByPciBusId_t>(lib, "nvmlDeviceGetHandleByPciBusId_v2")),
		  procs_(sym<nvmlDeviceGetComputeRunningProcesses_t>(lib, "nvmlDeviceGetComputeRunningProcesses_v3"))
	{
	}
	~NvmlUsage() override { ::dlclose(lib_); }
	NvmlUsage(const NvmlUsage &) = delete;
	NvmlUsage &operator=(const NvmlUsage &) = delete;
	bool usable() const { return handle_ && procs_; }

	std::vector<ProcessUse> processes(const Gpu &gpu) override
	{
		void *dev = nullptr;
		if (handle_(gpu.pci_bus_id.c_str(), &dev) != 0)
			return {};
		NvmlProcessInfo info[256];
		unsigned n = 256;
		if (procs_(dev, &n, info) != 0)
			return {};
		std::vector<ProcessUse> out;
		for (unsigned i = 0; i < n; i++)
			out.push_back({static_cast<pid_t>(info[i].pid), info[i].used_gpu_memory});
		return out;
	}

private:
	void *lib_;
	nvmlDeviceGetHandleByPciBusId_t handle_;
	nvmlDeviceGetComputeRunningProcesses_t procs_;
};

std::vector<Gpu> cuda_gpus(std::string &why)
{
	void *lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		why = "the CUDA driver (libcuda.so.1) is not installed";
		return {};
	}
	auto init = sym<cuInit_t>(lib, "cuInit");
	auto count = sym<cuDeviceGetCount_t>(lib, "cuDeviceGetCount");
	auto get = sym<cuDeviceGet_t>(lib, "cuDeviceGet");
	auto mem = sym<cuDeviceTotalMem_t>(lib, "cuDeviceTotalMem_v2");
	auto bus = sym<cuDeviceGetPCIBusId_t>(lib, "cuDeviceGetPCIBusId");
	int n = 0, rc = -1;
	if (!init || !count || !get || !mem || !bus)
		why = "libcuda.so.1 lacks the driver API entry points gpuoversubd needs";
	else if ((rc = init(0)) != 0)
		why = "cuInit failed with CUDA error " + std::to_string(rc) + " (no GPU, or no usable driver)";
	else if (count(&n) != 0 || n == 0)
		why = "the CUDA driver reports no GPU";
	std::vector<Gpu> out;
	for (int i = 0; why.empty() && i < n; i++) {
		int dev = 0;
		std::size_t bytes = 0;
		char id[32] = "";
		if (get(&dev, i) != 0 || mem(&bytes, dev) != 0 || bus(id, sizeof id, dev) != 0) {
			why = "cannot query CUDA device " + std::to_string(i);
			break;
		}
		Gpu g;
		g.memory = bytes;
		g.pci_bus_id = normalize_bus_id(id);
		out.push_back(g);
	}
	// The driver stays loaded: dlclose of libcuda after cuInit is not safe.
	return why.empty() ? out : std::vector<Gpu>{};
}

// NVML's per-process usage, or null where it cannot be loaded or started.
std::unique_ptr<UsageProbe> nvml_usage()
{
	void *nvml = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!nvml)
		return nullptr;
	auto init = sym<nvmlInit_t>(nvml, "nvmlInit_v2");
	auto usage = std::make_unique<NvmlUsage>(nvml);
	if (!init || init() != 0 || !usage->usable())
		return nullptr;
	return usage;
}

} // namespace

Discovery discover_gpus(const config::Config &cfg)
{
	Discovery d;
	if (!cfg.start.simulated_gpus.empty()) {
		for (const auto &s : cfg.start.simulated_gpus) {
			Gpu g;
			g.memory = s.memory;
			g.numa_node = s.numa_node;
			g.pci_bus_id = s.pci_bus_id;
			g.simulated = true;
			g.nvml = s.nvml;
			d.gpus.push_back(g);
		}
		d.source = "simulated";
		if (std::any_of(d.gpus.begin(), d.gpus.end(), [](const Gpu &g) { return g.nvml; }) && !(d.usage = nvml_usage()))
			throw std::runtime_error("a simulated GPU takes its usage from NVML, but libnvidia-ml.so.1 cannot be "
						 "loaded or initialised");
	} else {
		std::string why;
		d.gpus = cuda_gpus(why);
		if (d.gpus.empty())
			throw std::runtime_error("no GPU to manage: " + why +
						 ". gpuoversubd refuses to start without one; declare simulated_gpus in the "
						 "policy for tests and demos");
		std::sort(d.gpus.begin(), d.gpus.end(), [](auto &a, auto &b) { return a.pci_bus_id < b.pci_bus_id; });
		Topology topo;
		for (auto &g : d.gpus)
			g.numa_node = topo.numa_node_of(g.pci_bus_id);
		d.source = "CUDA";
		if ((d.usage = nvml_usage())) {
			d.source = "CUDA+NVML";
			for (auto &g : d.gpus)
				g.nvml = true;
		}
	}
	for (std::size_t i = 0; i < d.gpus.size(); i++)
		d.gpus[i].index = static_cast<std::uint32_t>(i);
	return d;
}

} // namespace gos::gpud
