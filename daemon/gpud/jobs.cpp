#include "daemon/gpud/jobs.hpp"

#include <algorithm>
#include <cmath>

namespace gos::gpud {

void LatencyHistogram::add(std::uint64_t ns)
{
	double idx = ns ? 2 * std::log2(static_cast<double>(ns)) : 0;
	buckets[std::min<std::size_t>(buckets.size() - 1, static_cast<std::size_t>(std::max(0.0, idx)))]++;
}

std::uint64_t LatencyHistogram::count() const
{
	std::uint64_t n = 0;
	for (auto b : buckets)
		n += b;
	return n;
}

double LatencyHistogram::percentile_us(double p) const
{
	std::uint64_t total = count(), seen = 0;
	if (!total)
		return 0;
	auto want = static_cast<std::uint64_t>(std::ceil(p * static_cast<double>(total)));
	for (std::size_t i = 0; i < buckets.size(); i++) {
		seen += buckets[i];
		if (seen >= std::max<std::uint64_t>(want, 1))
			return std::exp2(static_cast<double>(i + 1) / 2) / 1000;
	}
	return std::exp2(static_cast<double>(buckets.size()) / 2) / 1000;
}

namespace {

std::uint64_t merged_counter(std::uint64_t a, std::uint64_t b)
{
	return a + b;
}

std::uint64_t merged_peak(std::uint64_t a, std::uint64_t b)
{
	return std::max(a, b);
}

} // namespace

CounterBase CounterBase::of(const gos_tenant_stats &st)
{
	CounterBase c;
#define GOS_TENANT_STAT(type, name, kind, help) GOS_KEPT_##kind(GOS_COPY, name)
#define GOS_COPY(name, kind) c.name = st.name;
#include <gpuoversub/tenant_stats.def>
#undef GOS_COPY
	return c;
}

void CounterBase::add(const CounterBase &o)
{
#define GOS_TENANT_STAT(type, name, kind, help) GOS_KEPT_##kind(GOS_MERGE, name)
#define GOS_MERGE(name, kind) name = merged_##kind(name, o.name);
#include <gpuoversub/tenant_stats.def>
#undef GOS_MERGE
}

void to_json(nlohmann::json &j, const CounterBase &c)
{
	j = nlohmann::json::object();
#define GOS_TENANT_STAT(type, name, kind, help) GOS_KEPT_##kind(GOS_WRITE, name)
#define GOS_WRITE(name, kind) j[#name] = c.name;
#include <gpuoversub/tenant_stats.def>
#undef GOS_WRITE
}

void from_json(const nlohmann::json &j, CounterBase &c)
{
#define GOS_TENANT_STAT(type, name, kind, help) GOS_KEPT_##kind(GOS_READ, name)
#define GOS_READ(name, kind) c.name = j.value(#name, decltype(c.name){0});
#include <gpuoversub/tenant_stats.def>
#undef GOS_READ
}

bool Job::agent_joins(std::uint32_t cap)
{
	if (agents >= cap)
		return false;
	agents++;
	return true;
}

void Job::agent_left()
{
	if (agents)
		agents--;
}

RankStats *Job::rank(int r, pid_t pid, std::size_t cap)
{
	if (RankStats *rs = counters(r, pid))
		return rs;
	if (ranks.size() >= cap)
		return nullptr;
	ranks.push_back(RankStats{r, pid});
	return &ranks.back();
}

RankStats *Job::counters(int r, pid_t pid)
{
	auto it = std::find_if(ranks.begin(), ranks.end(), [&](const RankStats &rs) { return rs.rank == r && rs.pid == pid; });
	return it == ranks.end() ? nullptr : &*it;
}

bool Job::keep_mpi_rank(const MpiRank &r, std::size_t cap)
{
	if (auto it = mpi_ranks.find(r.rank); it != mpi_ranks.end()) {
		it->second = r;
		return true;
	}
	if (mpi_ranks.size() >= cap) {
		mpi_ranks_omitted++;
		return false;
	}
	mpi_ranks.emplace(r.rank, r);
	return true;
}

nlohmann::json to_json(const Job &job)
{
	nlohmann::json gpus = nlohmann::json::array();
	for (const auto &g : job.gpus)
		gpus.push_back({{"node_gpu", g.node_gpu}, {"tenant", g.tenant}, {"base", g.base}, {"live", g.live},
				{"shards", {{"held", g.shards.held}, {"total", g.shards.total}, {"reason", g.shards.reason}}}});
	return {{"version", 1}, {"job", job.id}, {"uid", job.uid}, {"partition", job.partition}, {"account", job.account},
		{"qos", job.qos}, {"factor_milli", job.factor_milli}, {"size_limit", job.size_limit}, {"gpus", gpus},
		{"steps", job.steps}, {"tasks", job.tasks}, {"cgroup", job.cgroup}, {"engine_instance", job.engine_instance},
		{"registered", job.registered}, {"started", job.started}, {"ended", job.ended}, {"end_reason", job.end_reason},
		{"latency_buckets", job.latency.buckets}, {"ranks", job.ranks}, {"advice_events", job.advice_events},
		{"mpi_ranks_omitted", job.mpi_ranks_omitted}, {"restarts", job.restarts},
		{"restarts_omitted", job.restarts_omitted}};
}

nlohmann::json mpi_rank_list(const Job &job)
{
	nlohmann::json out = nlohmann::json::array();
	for (const auto &[rank, r] : job.mpi_ranks)
		out.push_back(r);
	return out;
}

Job job_from_json(const nlohmann::json &j)
{
	if (j.at("version") != 1)
		throw nlohmann::json::other_error::create(501, "unknown record version", &j);
	Job job;
	job.id = j.at("job");
	job.uid = j.at("uid");
	job.partition = j.at("partition");
	job.account = j.at("account");
	job.qos = j.at("qos");
	job.factor_milli = j.at("factor_milli");
	job.size_limit = j.at("size_limit");
	for (const auto &g : j.at("gpus")) {
		JobGpu jg;
		jg.node_gpu = g.at("node_gpu");
		jg.base = g.at("base").get<CounterBase>();
		// Records from before kernel mode have neither: base was folded.
		jg.tenant = g.value("tenant", 0u);
		jg.live = g.value("live", CounterBase{});
		if (g.contains("shards"))
			jg.shards = {g["shards"].at("held"), g["shards"].at("total"), g["shards"].at("reason")};
		else
			jg.shards.reason = "registered before shards were recorded";
		job.gpus.push_back(jg);
	}
	job.steps = j.at("steps").get<std::set<std::uint32_t>>();
	// A record's "pids" from before start times were kept is dropped: those
	// numbers may name other processes now.
	job.tasks = j.value("tasks", std::map<pid_t, Task>{});
	job.cgroup = j.value("cgroup", std::uint64_t{0});
	job.engine_instance = j.value("engine_instance", std::uint64_t{0});
	// Records from before reconciliation lack these two.
	job.started = j.at("started");
	job.registered = j.value("registered", job.started);
	job.ended = j.at("ended");
	job.end_reason = j.value("end_reason", std::string{});
	job.latency.buckets = j.at("latency_buckets");
	job.ranks = j.at("ranks").get<std::vector<RankStats>>();
	job.advice_events = j.at("advice_events");
	job.mpi_ranks_omitted = j.value("mpi_ranks_omitted", std::uint64_t{0});
	job.restarts = j.value("restarts", std::vector<Resumption>{});	// from before they were kept: none
	job.restarts_omitted = j.value("restarts_omitted", std::uint64_t{0});
	// In the record itself before they had a file of their own.
	for (const MpiRank &r : j.value("mpi_ranks", nlohmann::json::array()).get<std::vector<MpiRank>>())
		job.mpi_ranks[r.rank] = r;
	return job;
}

} // namespace gos::gpud
