// Whether an allocation comes from a communication library (NCCL, NVSHMEM,
// UCX...), whose buffers are registered with NICs and peers and must stay
// put: such memory is counted but never evicted.
#pragma once

namespace gos::agent {

// ret: the hook's return address. Looks through the CUDA runtime when the
// library reached the driver through a shared libcudart.
bool from_pinned_library(void *ret);

} // namespace gos::agent
