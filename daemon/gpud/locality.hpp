// Which NUMA node a GPU is attached to, from hwloc's view of the PCI tree,
// so evicted data lands in host memory next to the GPU.
#pragma once

#include <string>

struct hwloc_topology;

namespace gos::gpud {

class Topology {
public:
	// The running machine, or an hwloc XML file (tests, HWLOC_XMLFILE).
	// Throws std::runtime_error if hwloc cannot load it.
	explicit Topology(const std::string &xml_file = "");
	~Topology();
	Topology(const Topology &) = delete;
	Topology &operator=(const Topology &) = delete;

	// NUMA node OS index of the device at "DDDD:BB:DD.F" (any domain
	// width), or -1 when hwloc does not know it or it spans several nodes.
	int numa_node_of(const std::string &pci_bus_id) const;

private:
	hwloc_topology *topo_ = nullptr;
};

} // namespace gos::gpud
