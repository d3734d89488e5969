// What advise, prefetch and discard cost the calling thread in the fake
// driver: a model, not a measurement. Each has a per-call and a per-MiB
// figure, from FAKECUDA_COST ("advise=10+0,prefetch=30+150,discard=5+2":
// microseconds per call + microseconds per MiB; an operation left out, and
// the whole variable unset, cost nothing, so tests run at full speed).
//
// Where each behaviour comes from (issue 16's account of the UVM driver, not
// measured here): a migration is CPU work done in the caller's call (per
// 2 MB block: allocate pages, map them for DMA, copy, map them on the CPU),
// hence a cost paid by the calling thread and growing with the bytes moved;
// the explicit-migrate path takes the address-space lock in read mode, so
// prefetches (and discards) of disjoint ranges from several threads
// overlap; setting a preferred location changes the address space's policy,
// which the model serializes (held exclusively, as a write). The bench's
// figures are chosen to give one thread the 6.4 GB/s measured for eviction
// on an H100 (bench/RESULTS.md).
#pragma once

#include <cstdint>

namespace fakecuda {

enum class Op { advise, prefetch, discard };

// Sleeps for op's modelled cost over bytes, under the address-space lock
// in the mode op takes it.
void pay(Op op, std::uint64_t bytes);

} // namespace fakecuda
