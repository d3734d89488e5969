// Jobs on this node as the SPANK plugin registered them: steps, task pids,
// policy facts, and the counters their reports need. Each record persists
// in the state directory (job_store.hpp), so a daemon restart loses nothing.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/config/config.hpp"
#include "common/report/report.hpp"
#include "common/util/rate_limit.hpp"
#include "daemon/gpud/activity.hpp"
#include "daemon/gpud/weight_rule.hpp"
#include "gos_engine.h"

// F(name, kind) for the fields of tenant_stats.def a CounterBase keeps.
#define GOS_KEPT_counter(F, name) F(name, counter)
#define GOS_KEPT_peak(F, name) F(name, peak)
#define GOS_KEPT_gauge(F, name)
#define GOS_KEPT_setting(F, name)
#define GOS_KEPT_identity(F, name)

namespace gos::gpud {

// Log-scale histogram (two buckets per power of two) of nanoseconds:
// small, mergeable and persistable, with percentiles within 41%.
struct LatencyHistogram {
	std::array<std::uint64_t, 72> buckets{};
	void add(std::uint64_t ns);
	std::uint64_t count() const;
	double percentile_us(double p) const;	// upper bound of the bucket
};

// A rank's counters (merged per rank and pid) and one rank as the MPI hooks
// saw it: the report's own structs, so a job's record and its report write
// them the same way.
using RankStats = report::Rank;
using MpiRank = report::MpiRank;

// A tenant's counters and peaks, the fields of tenant_stats.def of those
// kinds: carried over a daemon restart in the job's record, and summed (or
// for peaks, maxed) over the tenants a job had on a GPU.
struct CounterBase {
#define GOS_TENANT_STAT(type, name, kind, help) GOS_KEPT_##kind(GOS_COUNTER_FIELD, name)
#define GOS_COUNTER_FIELD(name, kind) decltype(gos_tenant_stats::name) name = 0;
#include <gpuoversub/tenant_stats.def>
#undef GOS_COUNTER_FIELD
	static CounterBase of(const gos_tenant_stats &st);	// a tenant's live counters
	void add(const CounterBase &o);				// sums, and the larger peaks
};
// Its JSON names the fields as the list does; a field the record lacks
// (from before the list grew) reads as 0.
void to_json(nlohmann::json &j, const CounterBase &c);
void from_json(const nlohmann::json &j, CounterBase &c);

struct JobGpu {
	std::uint32_t node_gpu = 0;
	// The engine's tenant. Saved: the kernel's outlive the daemon, and a
	// restarted daemon adopts them if the module was not reloaded.
	std::uint32_t tenant = 0;
	CounterBase base;			// counters of earlier tenants
	CounterBase live;			// the tenant's at the last save, folded in if it is lost
	ShardHolding shards;			// from the first step registered on the GPU
	// balloon
	ActivityWindow activity;
	std::uint64_t launches = 0;		// since the last period
	bool reports_activity = false;
	bool deflated = false;
	// unresponsive.hpp: a process of the job here let an order expire and
	// has not answered since; held_at: the limit on_unresponsive: refuse
	// holds it at meanwhile (0: none); acted: on_unresponsive was applied.
	bool unanswered = false;
	std::uint64_t held_at = 0;
	bool acted = false;
};

// This node's gpuoversubd restarted under the job (the report says what
// the node lost): when, and for each of the job's GPUs whether its engine
// tenant outlived the daemon (counters kept) or not (counters restarted
// from the saved record: what the tenant did after that save is lost).
struct Resumption {
	std::int64_t at = 0;			// unix seconds of the resume
	std::vector<bool> kept;			// in the job's GPU order
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Resumption, at, kept)

// A task the SPANK plugin registered: the pid and its start time name one
// process (a recycled pid is another), forgotten when it exits or its step ends.
struct Task {
	std::uint64_t start = 0;	// clock ticks after boot, /proc/PID/stat
	std::uint32_t step = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Task, start, step)

struct Job {
	std::uint64_t id = 0;
	uid_t uid = 0;
	std::string partition, account, qos;
	std::uint32_t factor_milli = 0;
	std::uint64_t size_limit = 0;
	std::vector<JobGpu> gpus;		// in the job's own GPU order
	std::set<std::uint32_t> steps;
	std::map<pid_t, Task> tasks;
	std::int64_t registered = 0;		// unix seconds of the last step or task registration
	std::uint64_t cgroup = 0;		// the job's cgroup v2 id, bound in the kernel
	std::uint64_t engine_instance = 0;	// the module load its tenants belong to
	std::int64_t started = 0, ended = 0;	// unix seconds
	std::string end_reason;			// why the daemon ended it itself; empty when Slurm did
	LatencyHistogram latency;
	std::vector<RankStats> ranks;		// merged per (rank, pid)
	// From rank 0's MPI_Finalize, by rank: at most max_ranks_per_job, the
	// rest only counted. Saved in a file of their own (JobStore)
	// when they change, so that the record saved every second stays small.
	std::map<int, MpiRank> mpi_ranks;
	std::uint64_t mpi_ranks_omitted = 0;
	bool mpi_ranks_unsaved = false;		// not in the record
	std::uint64_t advice_events = 0;
	// The first restarts under the job, at most max_restarts_kept; the rest only counted.
	static constexpr std::size_t max_restarts_kept = 8;
	std::vector<Resumption> restarts;
	std::uint64_t restarts_omitted = 0;
	// Resumed from its record at this daemon's start (not saved): only then
	// may its agents register buffers again (GOS_ALLOC_FLAG_AGAIN) without
	// their counting as new allocations.
	bool resumed = false;
	std::uint32_t agents = 0;		// its connections that said hello, now
	// The log lines its agents may cause: 20 at once, then 2 a second.
	TokenBucket log_budget{20, 2};

	// The one place each count and list grows, under its cap: agents
	// under max_agents_per_job; ranks under max_ranks_per_job, where every
	// request that names a new rank (HELLO, RANK) or reports one
	// (RANK_REPORT) is bounded alike.
	// One more connected agent if the job has fewer than cap; false when
	// it is full. agent_left() undoes it, when the connection closes or its
	// hello fails after all.
	bool agent_joins(std::uint32_t cap);
	void agent_left();
	// The counters of (rank, pid), made if the job counts fewer than cap;
	// nullptr when it is full.
	RankStats *rank(int rank, pid_t pid, std::size_t cap);
	// The counters of (rank, pid) if listed (an agent's, since its hello),
	// never made: what its allocations and orders add to.
	RankStats *counters(int rank, pid_t pid);
	// Keeps r's record if the job lists r already or fewer than cap ranks;
	// false (and counted in mpi_ranks_omitted) when it is full.
	bool keep_mpi_rank(const MpiRank &r, std::size_t cap);
};

// The node's jobs by id, as the ledger keeps them.
using Jobs = std::map<std::uint64_t, Job>;

nlohmann::json to_json(const Job &job);
nlohmann::json mpi_rank_list(const Job &job);	// by rank
Job job_from_json(const nlohmann::json &j);	// throws nlohmann::json::exception

} // namespace gos::gpud
