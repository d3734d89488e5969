// The process's place in its MPI job: from the environment (Slurm, Open
// MPI, PMIx) until libgpuoversub_mpi's MPI_Init tells it exactly.
//
// Lock: mu_ guards what was told (known_, rank_); a leaf, held only to
// copy them.
#pragma once

#include <mutex>
#include <utility>

#include <gpuoversub/abi.h>

#include "fork_safe.hpp"

namespace gos::agent {

class DaemonCalls;

class RankFacts final : public ForkSafe {
public:
	// -EINVAL for impossible values.
	int set(int rank, int local_rank, int world_size, const char *node);
	// The rank fields of a hello.
	void fill(gos_req_hello &hello) const;
	// The rank and local rank, -1 where unknown.
	std::pair<int, int> rank() const;
	// Tells the daemon what MPI_Init said, if it said anything yet.
	void tell(DaemonCalls &daemon) const;

	// fork(): mu_ is held across it; the child keeps its parent's rank.
	void fork_prepare() override { mu_.lock(); }
	void fork_parent() override { mu_.unlock(); }
	void fork_child() override { mu_.unlock(); }

private:
	mutable std::mutex mu_;
	bool known_ = false;
	gos_req_rank rank_{};
};

} // namespace gos::agent
