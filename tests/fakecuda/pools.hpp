// Stream-ordered memory pools: each device's default pool and those made
// with cuMemPoolCreate. A block freed on a stream goes back to its pool and
// is handed out again only on that stream, or once that stream has reached
// the free; a pool keeps what it holds beyond its release threshold only
// until the next synchronization. pools.cpp says where each rule comes from.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "streams.hpp"

namespace fakecuda {

int pool_create(const CUmemPoolProps &props, CUmemoryPool &out);
int pool_destroy(CUmemoryPool pool);
CUmemoryPool default_pool(int dev);
CUmemoryPool current_pool(int dev);
int set_current_pool(int dev, CUmemoryPool pool);
bool is_pool(CUmemoryPool pool);
int pool_alloc(CUmemoryPool pool, std::uint64_t size, const StreamRef &s, std::uint64_t &ptr);
// false if ptr is no live pool allocation. s null: free at once (cuMemFree).
bool pool_free(std::uint64_t ptr, const StreamRef &s);
int pool_attribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value, bool set);
int pool_trim(CUmemoryPool pool, std::uint64_t keep);
void pools_release_at_sync();

} // namespace fakecuda
