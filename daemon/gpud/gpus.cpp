#include "daemon/gpud/gpus.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <tuple>

#include "daemon/gpud/dl_symbol.hpp"
#include "daemon/gpud/locality.hpp"
#include "daemon/gpud/nvml.hpp"

namespace gos::gpud {
namespace {

// The few driver entry points used, declared here so no CUDA header or
// library is needed to build: CUresult and CUdevice are ints.
using cuInit_t = int (*)(unsigned);
using cuDeviceGetCount_t = int (*)(int *);
using cuDeviceGet_t = int (*)(int *, int);
using cuDeviceTotalMem_t = int (*)(std::size_t *, int);
using cuDeviceGetPCIBusId_t = int (*)(char *, int, int);

std::vector<Gpu> cuda_gpus(std::string &why)
{
	void *lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		why = "the CUDA driver (libcuda.so.1) is not installed";
		return {};
	}
	auto init = dl_symbol<cuInit_t>(lib, "cuInit");
	auto count = dl_symbol<cuDeviceGetCount_t>(lib, "cuDeviceGetCount");
	auto get = dl_symbol<cuDeviceGet_t>(lib, "cuDeviceGet");
	auto mem = dl_symbol<cuDeviceTotalMem_t>(lib, "cuDeviceTotalMem_v2");
	auto bus = dl_symbol<cuDeviceGetPCIBusId_t>(lib, "cuDeviceGetPCIBusId");
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

} // namespace

std::string normalize_bus_id(std::string id)
{
	for (char &c : id)
		c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
	// NVML writes an 8-digit domain; CUDA a 4-digit one.
	if (id.size() == 16 && id.compare(0, 4, "0000") == 0)
		id.erase(0, 4);
	return id;
}

Discovery discover_gpus(const config::Config &cfg)
{
	Discovery d;
	if (!cfg.start.simulated_gpus.empty()) {
		for (const auto &s : cfg.start.simulated_gpus) {
			Gpu g;
			g.memory = s.memory;
			g.numa_node = s.numa_node;
			g.pci_bus_id = s.pci_bus_id;
			g.uuid = s.uuid;
			g.simulated = true;
			g.nvml = s.nvml;
			d.gpus.push_back(g);
		}
		d.source = "simulated";
		if (std::any_of(d.gpus.begin(), d.gpus.end(), [](const Gpu &g) { return g.nvml; }) && !(d.usage = Nvml::open()))
			throw std::runtime_error("a simulated GPU takes its usage from NVML, but libnvidia-ml.so.1 cannot be "
						 "loaded or initialised");
	} else {
		std::string why;
		std::vector<Gpu> whole = cuda_gpus(why);
		std::unique_ptr<Nvml> nvml = Nvml::open();
		// A GPU in MIG mode is its instances: CUDA names each by the
		// parent's bus id, if it lists the parent at all (where every GPU
		// is in MIG mode it may list none, and the instances are all).
		Nvml::Mig mig = nvml ? nvml->mig() : Nvml::Mig{};
		std::erase_if(whole, [&](const Gpu &g) {
			return std::find(mig.parents.begin(), mig.parents.end(), g.pci_bus_id) != mig.parents.end();
		});
		for (Gpu &g : whole)
			g.uuid = nvml ? nvml->uuid_of(g.pci_bus_id) : "";
		d.gpus = std::move(whole);
		d.gpus.insert(d.gpus.end(), mig.instances.begin(), mig.instances.end());
		if (d.gpus.empty())
			throw std::runtime_error("no GPU to manage: " +
						 (mig.parents.empty() ? why
								      : std::to_string(mig.parents.size()) +
									" GPU(s) in MIG mode without a GPU instance" +
									(why.empty() ? "" : ", and " + why)) +
						 ". gpuoversubd refuses to start without one; declare simulated_gpus in the "
						 "policy for tests and demos");
		if (!why.empty())
			d.notes.push_back("CUDA lists no GPU of its own (" + why + "); the MIG instances NVML names are managed");
		std::stable_sort(d.gpus.begin(), d.gpus.end(), [](auto &a, auto &b) {
			auto index = [](const Gpu &g) { return g.mig_devices.empty() ? -1 : static_cast<int>(g.mig_devices[0].index); };
			return std::pair(a.pci_bus_id, index(a)) < std::pair(b.pci_bus_id, index(b));
		});
		Topology topo;
		for (auto &g : d.gpus)
			g.numa_node = topo.numa_node_of(g.pci_bus_id);
		d.source = "CUDA";	// CUDA+NVML, and ", MIG" where a GPU is in MIG mode
		if (nvml) {
			d.source = mig.parents.empty() ? "CUDA+NVML" : "CUDA+NVML, MIG";
			for (auto &g : d.gpus)
				g.nvml = true;
			d.usage = std::move(nvml);
		}
	}
	for (std::size_t i = 0; i < d.gpus.size(); i++)
		d.gpus[i].index = static_cast<std::uint32_t>(i);
	return d;
}

} // namespace gos::gpud
