// The process's place in its MPI job (from libgpuoversub_mpi's MPI_Init),
// told to the daemon now and again after every relink.
#include "ranks.hpp"

#include <cerrno>
#include <cstring>

#include "daemon_calls.hpp"
#include "settings.hpp"

namespace gos::agent {

int RankFacts::set(int rank, int local_rank, int world_size, const char *node)
{
	if (rank < 0 || local_rank < 0 || world_size <= 0 || rank >= world_size || local_rank >= world_size || !node ||
	    !*node)
		return -EINVAL;
	std::lock_guard g(mu_);
	rank_ = gos_req_rank{rank, local_rank, static_cast<std::uint32_t>(world_size), 0, {}};
	std::strncpy(rank_.node, node, sizeof rank_.node - 1);
	known_ = true;
	return 0;
}

void RankFacts::fill(gos_req_hello &hello) const
{
	std::lock_guard g(mu_);
	hello.rank = known_ ? rank_.rank : settings().rank;
	hello.local_rank = known_ ? rank_.local_rank : settings().local_rank;
	hello.world_size = known_ ? rank_.world_size : settings().world_size;
}

std::pair<int, int> RankFacts::rank() const
{
	std::lock_guard g(mu_);
	return known_ ? std::pair{rank_.rank, rank_.local_rank} : std::pair{settings().rank, settings().local_rank};
}

void RankFacts::tell(DaemonCalls &daemon) const
{
	gos_req_rank req;
	{
		std::lock_guard g(mu_);
		if (!known_)
			return;
		req = rank_;
	}
	if (int err = daemon.rank(req); err && err != -ENOTCONN)
		warn("gpuoversubd did not take this process's MPI rank: " + daemon.error());
}

} // namespace gos::agent
