// libgpuoversub_mpi.so: PMPI wrappers that tell the agent each process's
// place in the MPI job, gather the per-rank figures at MPI_Finalize, and
// offer gpuoversub_mpi_exchange. The agent is reached through dlsym, so the
// library is harmless where the agent is not preloaded.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <vector>

#include <gpuoversub/abi.h>
#include <gpuoversub/gpuoversub.h>
#include <gpuoversub/gpuoversub_mpi.h>

#define GOS_MPI_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

template <class Fn>
Fn agent_function(const char *name)
{
	return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}

struct Identity {
	int rank = -1, size = 0, local_rank = -1;
	char node[GOS_NAME_LEN] = {};
};

Identity me;
MPI_Comm private_comm = MPI_COMM_NULL;	// our own, so no message of ours meets the application's
std::atomic<std::uint64_t> exchanges{0};

gpuoversub_usage usage_now()
{
	gpuoversub_usage u{};
	u.size = sizeof u;
	if (auto stats = agent_function<int (*)(gpuoversub_usage *)>("gpuoversub_stats"); !stats || stats(&u))
		u = gpuoversub_usage{};
	return u;
}

// After the application's own MPI_Init: every rank is here, so the
// collectives below are part of a call all of them made.
void after_init()
{
	PMPI_Comm_rank(MPI_COMM_WORLD, &me.rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &me.size);
	MPI_Comm node_comm;
	if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm) == MPI_SUCCESS) {
		PMPI_Comm_rank(node_comm, &me.local_rank);
		PMPI_Comm_free(&node_comm);
	}
	char name[MPI_MAX_PROCESSOR_NAME] = "unknown";
	int len = 0;
	if (PMPI_Get_processor_name(name, &len) != MPI_SUCCESS || len <= 0)
		if (gethostname(name, sizeof name - 1) != 0)
			std::strcpy(name, "unknown");
	name[sizeof name - 1] = '\0';
	std::memcpy(me.node, name, std::min<std::size_t>(std::strlen(name), sizeof me.node - 1));	// long names cut
	PMPI_Comm_dup(MPI_COMM_WORLD, &private_comm);
	using SetRank = int (*)(int, int, int, const char *);
	if (auto set_rank = agent_function<SetRank>("gpuoversub_set_rank"); set_rank && me.local_rank >= 0)
		set_rank(me.rank, me.local_rank, me.size, me.node);
}

// Inside the application's MPI_Finalize, which every rank calls: one
// gather of fixed-size records to rank 0, which hands them to the daemon.
void before_finalize()
{
	if (private_comm == MPI_COMM_NULL)
		return;
	gpuoversub_usage u = usage_now();
	gos_rank_record mine{};
	mine.rank = me.rank;
	mine.local_rank = me.local_rank;
	mine.pid = static_cast<__u32>(getpid());
	mine.managed = u.managed;
	std::memcpy(mine.node, me.node, sizeof mine.node);
	mine.device_bytes = u.device_bytes;
	mine.host_bytes = u.host_bytes;
	mine.evictions = u.evictions;
	mine.returns = u.returns;
	mine.bytes_evicted = u.bytes_evicted;
	mine.bytes_returned = u.bytes_returned;
	mine.advice = u.advice;
	mine.pinned_bytes = u.pinned_bytes;
	mine.exchanges = exchanges;
	std::vector<gos_rank_record> all(me.rank == 0 ? static_cast<std::size_t>(me.size) : 0);
	int rc = PMPI_Gather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, 0, private_comm);
	using Report = int (*)(const gos_rank_record *, size_t);
	if (rc == MPI_SUCCESS && me.rank == 0)
		if (auto report = agent_function<Report>("gpuoversub_mpi_report_ranks"))
			report(all.data(), all.size());
	PMPI_Comm_free(&private_comm);
}

} // namespace

GOS_MPI_EXPORT int MPI_Init(int *argc, char ***argv)
{
	int rc = PMPI_Init(argc, argv);
	if (rc == MPI_SUCCESS)
		after_init();
	return rc;
}

GOS_MPI_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int rc = PMPI_Init_thread(argc, argv, required, provided);
	if (rc == MPI_SUCCESS)
		after_init();
	return rc;
}

GOS_MPI_EXPORT int MPI_Finalize(void)
{
	before_finalize();
	return PMPI_Finalize();
}

GOS_MPI_EXPORT int gpuoversub_mpi_exchange(MPI_Comm comm, struct gpuoversub_pressure *out)
{
	if (!out)
		return MPI_ERR_ARG;
	int rank = 0;
	if (int rc = PMPI_Comm_rank(comm, &rank); rc != MPI_SUCCESS)
		return rc;
	// A rank's figures are its job's on its GPU, which other ranks share:
	// read them only once every rank has reached the safe point, so that
	// what any rank allocated before it counts in every rank's figures.
	if (int rc = PMPI_Barrier(comm); rc != MPI_SUCCESS)
		return rc;
	gpuoversub_usage u = usage_now();
	gpuoversub_pressure mine{};
	mine.rank = rank;
	mine.managed = static_cast<std::int32_t>(u.managed);
	mine.device_bytes = u.device_bytes;
	mine.host_bytes = u.host_bytes;
	mine.entitlement = u.entitlement;
	mine.headroom = u.headroom;
	mine.pressure = u.managed && u.entitlement
				? static_cast<double>(u.device_bytes + u.host_bytes) / static_cast<double>(u.entitlement)
				: 0;
	exchanges++;
	return PMPI_Allgather(&mine, sizeof mine, MPI_BYTE, out, sizeof mine, MPI_BYTE, comm);
}
