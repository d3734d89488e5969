// The fake GPUs' memory, shared by every process of a test through a file
// (FAKECUDA_STATE), so that two jobs really compete for one device. Bytes are
// charged per process, and the charges of dead processes are reaped, as the
// real driver frees a killed process's memory.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fakecuda {

constexpr int max_devices = 8;

struct DeviceUsage {
	std::uint64_t capacity, used, peak, over_capacity_peak;
};

void state_init();			// reads FAKECUDA_* once
int device_count();
std::uint64_t context_bytes();
std::uint64_t prefetch_delay_ms();

// Charges bytes to this process on dev. strict: fail (false) rather than
// exceed the capacity, as cudaMalloc does; managed memory may exceed it
// (the real driver would thrash), which over_capacity_peak records.
bool charge(int dev, std::uint64_t bytes, bool strict);
void discharge(int dev, std::uint64_t bytes);
DeviceUsage usage(int dev);

// The per-call record: appended to FAKECUDA_LOG when set.
void log_call(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

} // namespace fakecuda
