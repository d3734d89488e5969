// The fake GPUs' memory, shared by every process of a test through a file
// (FAKECUDA_STATE), so that two jobs really compete for one device. Bytes are
// charged per process, and the charges of dead processes are reaped, as the
// real driver frees a killed process's memory.
//
// Managed memory is evictable by the driver itself: when a process's
// managed pages need room on a full device, UVM evicts other processes'
// managed pages to host RAM, whether those processes run or not
// (open-gpu-kernel-modules, kernel-open/nvidia-uvm/uvm_pmm_gpu.c: root
// chunks are picked for eviction from the GPU's list of used chunks, of any
// VA space; not yet measured here on a GPU). The fake does the same:
// charge_managed() takes the room from other processes' managed bytes, and
// each of those learns which of its pages left at its next call
// (take_evicted). Device allocations are never evicted.
#pragma once

#include <cstddef>
#include <cstdint>

#include <sys/types.h>

namespace fakecuda {

constexpr int max_devices = 8;

struct DeviceUsage {
	// over_capacity_peak: the most ever asked of the device, where that
	// was more than it has, before the driver evicted anything for it.
	// driver_evicted: managed bytes the driver evicted to make room.
	std::uint64_t capacity, used, peak, over_capacity_peak, driver_evicted;
};

void state_init();			// reads FAKECUDA_* once
int device_count();			// as CUDA sees them
std::uint64_t context_bytes();
std::uint64_t prefetch_delay_ms();

// Charges bytes to this process on dev. strict: fail (false) rather than
// exceed the capacity, as cudaMalloc does; otherwise (a context) it may
// exceed it, which over_capacity_peak records.
bool charge(int dev, std::uint64_t bytes, bool strict);
void discharge(int dev, std::uint64_t bytes);
// Managed pages placed on dev: room is taken from other processes'
// managed bytes where the device is full; what even that cannot cover
// exceeds the capacity (the driver would thrash), as over_capacity_peak
// records.
void charge_managed(int dev, std::uint64_t bytes);
void discharge_managed(int dev, std::uint64_t bytes);
// This process's managed bytes the driver evicted since the last call.
std::uint64_t take_evicted(int dev);
DeviceUsage usage(int dev);
// The calls above take CUDA's ordinal (mig.hpp maps it to its slot); these
// two, NVML's, take a slot: a physical device or a MIG instance.
DeviceUsage slot_usage(int slot);
// Each live process's device bytes in slot, managed pages not counted: the
// fake NVML's per-process usage (nvml.cpp). Returns how many processes
// hold any, writing at most max of them; compute_instance >= 0: only
// those that see that compute instance of slot's GPU instance.
struct ProcessBytes {
	pid_t pid;
	std::uint64_t bytes;
};
int processes(int slot, ProcessBytes *out, int max, int compute_instance = -1);

// The per-call record: appended to FAKECUDA_LOG when set.
void log_call(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

} // namespace fakecuda
