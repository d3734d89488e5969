// A job's eviction report on one node: the one shape of the JSON that
// gpuoversubd writes (report directory, REPORT and STATS replies) and that
// everything reads (the summary text, gpuoversubctl, the SPANK epilog and
// AdminComment). Fields and their meaning: docs/architecture.md, "Schemas".
//
// Written by to_json only. nlohmann::json keeps an object's keys sorted, so
// the reply lists them by name; the stored file puts job and uid first
// (stored_report_text), so that its owner is read from its first bytes.
//
// Read by from_json, which accepts every report a release wrote: a field
// that is missing (from before it was added: node, weights, mpi_ranks,
// daemon_restarts...) reads as its default below; a field it does not know
// (from a later release) is ignored; only "job" is required, and a field of
// the wrong type throws nlohmann::json::exception.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <gpuoversub/abi.h>

// F(name) for the fields of tenant_stats.def a report keeps per GPU: the
// counters (summed over the job's tenants on the GPU) and the peaks (maxed).
#define GOS_REPORTED_counter(F, name) F(name)
#define GOS_REPORTED_peak(F, name) F(name)
#define GOS_REPORTED_gauge(F, name)
#define GOS_REPORTED_setting(F, name)
#define GOS_REPORTED_identity(F, name)

namespace gos::report {

// One factor of a GPU's weight: which fact or rule, its value, and why.
struct WeightFactor {
	std::string fact;	// shards, partition, qos, account, balloon, fairness
	double factor = 1;
	std::string why;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(WeightFactor, fact, factor, why)

// A GPU's weight, the product of its factors (derivation).
struct GpuWeight {
	std::uint32_t gpu = 0;
	double nominal = 1;	// before the balloon: sizes limits
	double effective = 1;	// after it: what the engine gets
	std::vector<WeightFactor> derivation;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(GpuWeight, gpu, nominal, effective, derivation)

// One of the job's GPUs: its counters and peaks by their tenant_stats.def names.
struct GpuPart {
	std::uint32_t gpu = 0;	// node index
	std::string pci_bus_id;
	std::string uuid;	// where known: a MIG instance's tells it from its siblings, which share the bus id
#define GOS_TENANT_STAT(type, name, kind, help) GOS_REPORTED_##kind(GOS_REPORT_FIELD, name)
#define GOS_REPORT_FIELD(name) decltype(gos_tenant_stats::name) name = 0;
#include <gpuoversub/tenant_stats.def>
#undef GOS_REPORT_FIELD
};
void to_json(nlohmann::json &j, const GpuPart &g);
void from_json(const nlohmann::json &j, GpuPart &g);

// Added allocation latency, in microseconds.
struct Latency {
	double p50 = 0, p99 = 0;
	std::uint64_t count = 0;	// allocations measured
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Latency, p50, p99, count)

// What the agent of one process counted; rank -1 where no MPI rank is known.
struct Rank {
	int rank = -1;
	pid_t pid = 0;
	std::uint64_t allocs = 0, bytes_allocated = 0, bytes_evicted = 0, bytes_returned = 0, advice = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Rank, rank, pid, allocs, bytes_allocated, bytes_evicted, bytes_returned,
						advice)

// One rank as the MPI hooks saw it at MPI_Finalize (gos_rank_record).
struct MpiRank {
	int rank = -1, local_rank = -1;
	bool managed = false;
	pid_t pid = 0;
	std::string node;
	std::uint64_t device_bytes = 0, host_bytes = 0, evictions = 0, returns = 0, bytes_evicted = 0,
		      bytes_returned = 0, advice = 0, pinned_bytes = 0, exchanges = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(MpiRank, rank, local_rank, managed, pid, node, device_bytes, host_bytes,
						evictions, returns, bytes_evicted, bytes_returned, advice,
						pinned_bytes, exchanges)

// A GPU's counters across one restart of the node's daemon: kept (the
// engine's tenant outlived it), or restarted from the saved record. JSON:
// "counters": "kept" or "saved_record".
struct RestartGpu {
	std::uint32_t gpu = 0;
	std::string pci_bus_id;
	bool kept = false;
};
void to_json(nlohmann::json &j, const RestartGpu &g);
void from_json(const nlohmann::json &j, RestartGpu &g);

struct DaemonRestart {
	std::string at;		// ISO 8601, UTC
	std::vector<RestartGpu> gpus;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(DaemonRestart, at, gpus)

struct Report {
	std::uint64_t job = 0;
	std::string node;	// short host name; empty in reports before 2026-11
	std::uint32_t uid = 0;
	std::string partition, account, qos;
	double oversub_factor = 0;	// --gpu-mem-oversub's FACTOR; 0 when none
	std::uint64_t size_limit = 0;	// --gpu-mem-oversub's SIZE in bytes; 0 when none
	std::string started, ended;	// ISO 8601, UTC; ended empty while the job runs
	std::string end_reason;		// why the daemon ended it itself; empty when Slurm did
	// The job's totals over its GPUs: peaks summed, counters summed,
	// oversubscribed_s the longest of any GPU.
	std::uint64_t peak_device_bytes = 0, peak_host_bytes = 0;
	std::uint64_t bytes_evicted = 0, evictions = 0, bytes_returned = 0, returns = 0;
	double oversubscribed_s = 0;
	Latency alloc_latency_us;
	std::uint64_t throttle_events = 0, advice_events = 0;
	std::vector<GpuPart> gpus;	// in the job's GPU order
	std::vector<Rank> ranks;
	std::vector<MpiRank> mpi_ranks;	// by rank, at most the daemon's limit
	std::uint64_t mpi_ranks_omitted = 0;
	std::vector<DaemonRestart> daemon_restarts;	// the first few
	std::uint64_t daemon_restarts_omitted = 0;
	// Each GPU's weight and why; in the final report and REPORT's reply,
	// not in STATS' (the agent's own view).
	std::optional<std::vector<GpuWeight>> weights;
};
void to_json(nlohmann::json &j, const Report &r);
void from_json(const nlohmann::json &j, Report &r);

// The report as the report directory keeps it: pretty, job and uid first.
std::string stored_report_text(const Report &r);

} // namespace gos::report
