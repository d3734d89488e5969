// The fake's MIG: physical devices split into GPU instances, each a memory
// of its own (a slot of the shared state beside the physical devices'),
// declared by FAKECUDA_MIG=DEV:GI[,GI...][;DEV:...], where a GI is SIZE,
// or SIZE/N for N compute instances sharing its memory, or "-" for an
// empty MIG index (a destroyed instance's hole). "DEV:-" is a device in MIG
// mode without an instance.
//
// Where its behaviour comes from (nvml.h; NVIDIA's MIG user guide, "CUDA
// Device Enumeration" and "Device Names"; not yet measured on a GPU):
//  - a MIG device is a compute instance, named "MIG-<uuid>", and its
//    parent "GPU-<uuid>"; the compute instances of one GPU instance share
//    its memory;
//  - NVML reaches a MIG device from its parent by index, 0 to the parent's
//    maximum, NOT_FOUND where none is; its GPU instance id is the
//    driver's placement, not that index;
//  - CUDA sees an instance only through CUDA_VISIBLE_DEVICES=MIG-<uuid>,
//    and a process sees one MIG device: the first one listed, as ordinal
//    0, with its parent's PCI bus id. Without a MIG entry the fake keeps
//    its devices as they are, MIG parents with their whole memory, which a
//    daemon must not take for a GPU of its own.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fakecuda {

constexpr int max_slots = 16;		// physical devices and GPU instances
constexpr int max_mig_per_gpu = 7;	// an H100's MIG devices

struct MigDevice {
	int parent;			// physical device
	int index;			// under its parent, for NVML
	unsigned gpu_instance;		// the driver's GI id
	unsigned compute_instance;	// within the GPU instance
	std::uint64_t memory;		// the GPU instance's
	int slot;			// the GPU instance's, in the shared state
};

// Parses FAKECUDA_MIG once; physical devices take slots 0 to devices - 1,
// GPU instances the next ones. Exits the process with a message on a bad
// value.
void mig_init(int devices);
int slot_count();
int physical_count();
const MigDevice *mig_at(int parent, int index);	// null: a hole, or none
const MigDevice *mig_in_slot(int slot);		// a GPU instance's first
bool mig_enabled(int parent);

void gpu_uuid(int parent, char *out, std::size_t len);
void mig_uuid(const MigDevice &m, char *out, std::size_t len);

// The slot of CUDA's ordinal under CUDA_VISIBLE_DEVICES, and how many
// ordinals CUDA sees.
int cuda_slot(int ordinal);
int cuda_count();
int visible_compute_instance();	// of the MIG device CUDA sees; -1: none

} // namespace fakecuda
