// The virtual-memory API in the fake driver: physical handles (cuMemCreate)
// backed by memfds, address reservations, mappings of handles into them and
// each mapping's access. Data reached through a range that is unmapped or
// not accessible faults: copies to or from it fail. vmm.cpp says where each
// rule comes from.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>

namespace fakecuda {

constexpr std::uint64_t vmm_granularity = 2 << 20;

// 0 or a CUresult value.
int vmm_create(const CUmemAllocationProp &prop, std::uint64_t size, std::uint64_t &handle);
int vmm_release(std::uint64_t handle);
int vmm_reserve(std::uint64_t size, std::uint64_t &ptr);
int vmm_free(std::uint64_t ptr, std::uint64_t size);
int vmm_map(std::uint64_t ptr, std::uint64_t size, std::uint64_t offset, std::uint64_t handle);
int vmm_unmap(std::uint64_t ptr, std::uint64_t size);
int vmm_set_access(std::uint64_t ptr, std::uint64_t size, const CUmemAccessDesc *desc, std::size_t count);
// CUDA_ERROR_INVALID_VALUE unless [ptr, ptr + len) lies in one reservation,
// mapped throughout and readable (and writable, if write).
int vmm_check_access(std::uint64_t ptr, std::uint64_t len, bool write);

} // namespace fakecuda
