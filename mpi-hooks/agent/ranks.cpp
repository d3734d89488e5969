// The process's place in its MPI job (from libgpuoversub_mpi's MPI_Init),
// told to the daemon now and again after every relink, and rank 0's
// gathered breakdown at MPI_Finalize.
#include <cerrno>
#include <cstring>

#include "agent.hpp"
#include "settings.hpp"

namespace gos::agent {

int Agent::set_rank(int rank, int local_rank, int world_size, const char *node)
{
	if (rank < 0 || local_rank < 0 || world_size <= 0 || rank >= world_size || local_rank >= world_size || !node ||
	    !*node)
		return -EINVAL;
	{
		std::lock_guard g(rank_mu_);
		rank_ = gos_req_rank{rank, local_rank, static_cast<std::uint32_t>(world_size), 0, {}};
		std::strncpy(rank_.node, node, sizeof rank_.node - 1);
		rank_known_ = true;
	}
	bool was_linked = connected_.load(std::memory_order_acquire);
	ensure_link();	// a new link sends the rank itself
	if (auto engine = this->engine(); engine && was_linked)
		send_rank(*engine);
	return 0;
}

void Agent::send_rank(EngineClient &engine)
{
	gos_req_rank req;
	{
		std::lock_guard g(rank_mu_);
		if (!rank_known_)
			return;
		req = rank_;
	}
	if (int err = engine.rank(req); err && err != -ENOTCONN)
		warn("gpuoversubd did not take this process's MPI rank: " + engine.error());
}

int Agent::report_ranks(const gos_rank_record *records, std::size_t count)
{
	if (!records || !count)
		return -EINVAL;
	auto engine = this->engine();
	if (!engine)
		return -ENOTCONN;
	int err = engine->rank_report(records, count);
	if (err && err != -ENOTCONN)
		warn("gpuoversubd did not take the job's per-rank breakdown: " + engine->error());
	return err;
}

} // namespace gos::agent
