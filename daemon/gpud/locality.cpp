#include "daemon/gpud/locality.hpp"

#include <hwloc.h>

#include <cstdio>
#include <stdexcept>

namespace gos::gpud {

Topology::Topology(const std::string &xml_file)
{
	if (hwloc_topology_init(&topo_) != 0)
		throw std::runtime_error("hwloc: cannot initialise a topology");
	// Keep I/O objects, or PCI devices and GPUs vanish from the tree.
	hwloc_topology_set_io_types_filter(topo_, HWLOC_TYPE_FILTER_KEEP_ALL);
	if (!xml_file.empty() && hwloc_topology_set_xml(topo_, xml_file.c_str()) != 0) {
		hwloc_topology_destroy(topo_);
		throw std::runtime_error("hwloc: cannot read topology " + xml_file);
	}
	if (hwloc_topology_load(topo_) != 0) {
		hwloc_topology_destroy(topo_);
		throw std::runtime_error("hwloc: cannot load the topology" + (xml_file.empty() ? "" : " " + xml_file));
	}
}

Topology::~Topology()
{
	hwloc_topology_destroy(topo_);
}

int Topology::numa_node_of(const std::string &pci_bus_id) const
{
	unsigned domain, bus, dev, func;
	char tail;
	if (std::sscanf(pci_bus_id.c_str(), "%x:%x:%x.%x%c", &domain, &bus, &dev, &func, &tail) != 4)
		return -1;
	hwloc_obj_t obj = hwloc_get_pcidev_by_busid(topo_, domain, bus, dev, func);
	if (!obj)
		return -1;
	hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo_, obj);
	if (!anc || !anc->nodeset || hwloc_bitmap_weight(anc->nodeset) != 1)
		return -1;
	return hwloc_bitmap_first(anc->nodeset);
}

} // namespace gos::gpud
