// Fake device memory on host pages: device allocations, managed
// allocations whose residency is tracked per 64 KiB page, and memory
// exported to or imported from another process (CUDA IPC). Data always
// lives in host memory; residency is bookkeeping that tests read back
// (fakecuda_residency) and that the shared capacity is charged by. The
// virtual-memory API's reservations live in vmm.cpp.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>

namespace fakecuda {

constexpr std::uint64_t page = 64 << 10;

enum class Where : std::uint8_t { none, device, host };

// How device memory came to be: only cuMemAlloc's may be exported.
enum class Origin : std::uint8_t { mem_alloc, pool, graph };

// 0 or a CUresult value.
int alloc_device(int dev, std::uint64_t size, Origin origin, std::uint64_t &ptr);
int alloc_managed(int dev, std::uint64_t size, std::uint64_t &ptr);
int free_memory(std::uint64_t ptr);
int address_range(std::uint64_t ptr, std::uint64_t &base, std::uint64_t &size);
bool is_managed(std::uint64_t ptr);

// [ptr, ptr + len) must lie inside one allocation, or inside mapped and
// accessible ranges of a reservation (vmm.cpp); write: it is written.
int check_range(std::uint64_t ptr, std::uint64_t len, bool write);
// moved: set to the bytes that changed place.
int prefetch(std::uint64_t ptr, std::uint64_t len, Where to, std::uint64_t *moved = nullptr);
int discard(std::uint64_t ptr, std::uint64_t len);	// managed memory only
int prefer(std::uint64_t ptr, std::uint64_t len, Where where);	// none = unset
void touch(std::uint64_t ptr, std::uint64_t len);	// first touch populates
void residency(std::uint64_t ptr, std::uint64_t len, std::uint64_t &device, std::uint64_t &host);

int ipc_export(std::uint64_t ptr, CUipcMemHandle &handle);
int ipc_import(const CUipcMemHandle &handle, std::uint64_t &ptr);
int ipc_close(std::uint64_t ptr);

} // namespace fakecuda
