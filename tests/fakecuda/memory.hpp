// Fake device memory on host pages: plain device allocations, managed
// allocations whose residency is tracked per 64 KiB page, and VMM handles.
// Data always lives in host memory; residency is bookkeeping that tests
// read back (fakecuda_residency) and that the shared capacity is charged by.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fakecuda {

constexpr std::uint64_t page = 64 << 10;

enum class Where : std::uint8_t { none, device, host };

// 0 or a CUresult value.
int alloc_device(int dev, std::uint64_t size, std::uint64_t &ptr);
int alloc_managed(int dev, std::uint64_t size, std::uint64_t &ptr);
int free_memory(std::uint64_t ptr);
int address_range(std::uint64_t ptr, std::uint64_t &base, std::uint64_t &size);
bool is_managed(std::uint64_t ptr);

// [ptr, ptr + len) must lie inside one allocation.
int check_range(std::uint64_t ptr, std::uint64_t len);
int prefetch(std::uint64_t ptr, std::uint64_t len, Where to);
int prefer(std::uint64_t ptr, std::uint64_t len, Where where);	// none = unset
void touch(std::uint64_t ptr, std::uint64_t len);	// first touch populates
void residency(std::uint64_t ptr, std::uint64_t len, std::uint64_t &device, std::uint64_t &host);

int vmm_create(int dev, bool on_device, std::uint64_t size, std::uint64_t &handle);
int vmm_release(std::uint64_t handle);
int reserve(std::uint64_t size, std::uint64_t &ptr);

} // namespace fakecuda
