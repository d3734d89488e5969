#include "daemon/gpud/daemon.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>

#include "common/util/atomic_file.hpp"
#include "common/util/log.hpp"
#include "common/util/units.hpp"
#include "daemon/gpud/report.hpp"

namespace gos::gpud {
namespace {

std::string errno_text(int err)
{
	return std::strerror(err < 0 ? -err : err);
}

template <class T>
std::string raw(const T &v)
{
	return std::string(reinterpret_cast<const char *>(&v), sizeof v);
}

std::int64_t unix_now()
{
	return static_cast<std::int64_t>(std::time(nullptr));
}

} // namespace

Daemon::Daemon(config::Config cfg, Discovery gpus, Engine engine)
	: cfg_(std::move(cfg)), discovery_(std::move(gpus)), engine_(std::move(engine.control)),
	  clients_(std::move(engine.clients)), store_(cfg_.start.state_dir)
{
	for (const Gpu &g : discovery_.gpus) {
		int err = engine_->gpu_add(g.index, g.memory, std::min(cfg_.start.reserve, g.memory - 1));
		if (err)
			throw std::runtime_error("cannot add GPU " + std::to_string(g.index) + " to the engine: " + errno_text(err));
	}
	std::vector<std::string> problems;
	jobs_ = store_.load_all(problems);
	for (const auto &p : problems)
		GOS_LOG(log::error, "state: " << p);
	for (auto &[id, job] : jobs_) {
		if (job.ended)
			continue;	// report pending: persist_tick retries it
		bool fits = std::all_of(job.gpus.begin(), job.gpus.end(),
					[&](const JobGpu &g) { return g.node_gpu < discovery_.gpus.size(); });
		if (!fits) {
			GOS_LOG(log::error, "state: job " << id << " names a GPU this node no longer has; its record is kept but ignored");
			continue;
		}
		adopt_tenants(job);
		ensure_tenants(job);
		bind_job(job);
		GOS_LOG(log::notice, "state: resumed job " << id << " with " << job.steps.size() << " step(s) and "
							   << job.pids.size() << " task(s)");
	}
	sweep_unowned_tenants();
	for (const Gpu &g : discovery_.gpus)
		apply_policy(g.index);
}

// Tenants the engine has but no job record names: in the kernel, ones made
// just before a crash saved their record, or left retiring by a daemon
// that stopped. A fresh userspace engine has none.
void Daemon::sweep_unowned_tenants()
{
	std::vector<std::uint32_t> all;
	if (int err = engine_->tenant_list(all)) {
		GOS_LOG(log::warning, "engine: cannot list tenants: " << errno_text(err));
		return;
	}
	for (std::uint32_t t : all)
		if (!tenant_owner_.count(t)) {
			GOS_LOG(log::notice, "engine: tenant " << t << " belongs to no job record; removing it");
			retire_tenant(t);
		}
}

void Daemon::attach(Session &s)
{
	sessions_[s.id] = &s;
}

void Daemon::detach(Session &s)
{
	sessions_.erase(s.id);
	auto it = jobs_.find(s.job);
	if (it != jobs_.end())
		it->second.rank(s.stats.rank, s.stats.pid).add(s.stats);
	s.stats = {};
	if (!s.client)
		return;	// in the kernel the process's file is its client
	by_client_.erase(s.client);
	clients_->client_exit(s.client);
	s.client = 0;
	flush_orders();		// returns for whoever was squeezed by this process
}

void Daemon::handle(Session &s, const proto::Frame &f)
{
	// Who may ask is decided here, once, before any handler runs.
	// engine_agent: an agent's call on the engine, which in the kernel it
	// makes on /dev/gpuoversub instead.
	enum class Caller { anyone, agent, engine_agent, root };
	struct Route {
		Handler fn;
		Caller who;
	};
	static const std::map<std::uint16_t, Route> routes = {
		{GOS_REQ_HELLO, {&Daemon::hello, Caller::anyone}},
		{GOS_REQ_ALLOC, {&Daemon::alloc, Caller::engine_agent}},
		{GOS_REQ_FREE, {&Daemon::free_buffer, Caller::engine_agent}},
		{GOS_REQ_SET_PRIORITY, {&Daemon::set_priority, Caller::engine_agent}},
		{GOS_REQ_ORDER_DONE, {&Daemon::order_done, Caller::engine_agent}},
		{GOS_REQ_ACTIVITY, {&Daemon::activity, Caller::agent}},
		{GOS_REQ_PLACEMENT, {&Daemon::placement, Caller::engine_agent}},
		{GOS_REQ_MEMINFO, {&Daemon::meminfo, Caller::agent}},
		{GOS_REQ_STATS, {&Daemon::stats, Caller::agent}},
		{GOS_REQ_STATUS, {&Daemon::status, Caller::anyone}},
		{GOS_REQ_JOBS, {&Daemon::jobs, Caller::anyone}},
		{GOS_REQ_REPORT, {&Daemon::report, Caller::anyone}},
		{GOS_REQ_STEP_REGISTER, {&Daemon::step_register, Caller::root}},
		{GOS_REQ_STEP_END, {&Daemon::step_end, Caller::root}},
		{GOS_REQ_JOB_END, {&Daemon::job_end, Caller::root}},
		{GOS_REQ_TASK_REGISTER, {&Daemon::task_register, Caller::root}},
		{GOS_REQ_RANK, {&Daemon::rank, Caller::agent}},
		{GOS_REQ_RANK_REPORT, {&Daemon::rank_report, Caller::agent}},
	};
	Reply r;
	auto route = routes.find(f.hdr.type);
	if (route == routes.end()) {
		r = {-EINVAL, "not a request", {}};
	} else if (route->second.who == Caller::root && s.peer.uid != 0) {
		r = {-EPERM, "registering and ending steps and tasks is for root (the SPANK plugin)", {}};
	} else if (route->second.who != Caller::anyone && route->second.who != Caller::root && !s.job) {
		r = {-EPERM, "say hello first", {}};
	} else if (route->second.who == Caller::engine_agent && !clients_) {
		r = {-EOPNOTSUPP, "this node's engine is gpuoversub.ko: make this call on /dev/gpuoversub", {}};
	} else {
		try {
			r = (this->*route->second.fn)(s, f);
		} catch (const std::exception &e) {
			GOS_LOG(log::error, "request " << f.hdr.type << " from pid " << s.peer.pid << " failed: " << e.what());
			r = {-EIO, e.what(), {}};
		}
	}
	s.send(proto::encode_reply(f.hdr.seq, r.status, r.error, r.body.data(), r.body.size()));
	flush_orders();
}

std::optional<std::uint64_t> Daemon::job_of_pid(pid_t pid) const
{
	std::optional<std::uint64_t> found;
	auto known = [&](pid_t p) {
		for (const auto &[id, job] : jobs_)
			if (!job.ended && job.pids.count(p)) {
				found = id;
				return true;
			}
		return false;
	};
	if (registered_ancestor(pid, known))
		return found;
	// Slurm's cgroup plugin puts every task under .../job_<id>/, which a
	// process cannot leave by itself.
	auto cg = cgroup_job_of(pid);
	if (cg && jobs_.count(*cg) && !jobs_.at(*cg).ended)
		return cg;
	return std::nullopt;
}

Daemon::Reply Daemon::hello(Session &s, const proto::Frame &f)
{
	gos_req_hello req;
	if (auto why = proto::decode(f, req))
		return {-EINVAL, *why, {}};
	if (s.client)
		return {-EALREADY, "this connection already said hello", {}};
	if (static_cast<pid_t>(req.pid) != s.peer.pid)
		return {-EPERM, "pid " + std::to_string(req.pid) + " is not the connecting process (" +
					std::to_string(s.peer.pid) + ")", {}};
	auto job = job_of_pid(s.peer.pid);
	if (!job)
		return {-EPERM, "process " + std::to_string(s.peer.pid) +
					" is not a task of any job registered with gpuoversub on this node", {}};
	if (req.job_id && req.job_id != *job)
		return {-EPERM, "process " + std::to_string(s.peer.pid) + " belongs to job " + std::to_string(*job) +
					", not job " + std::to_string(req.job_id), {}};
	std::uint32_t client = 0;
	if (clients_) {
		if (int err = clients_->client_create(client))
			return {err, "engine: " + errno_text(err), {}};
		by_client_[client] = &s;
	}
	s.client = client;
	s.job = *job;
	s.stats = RankStats{req.rank, s.peer.pid};
	gos_rep_hello rep{};
	rep.job_id = *job;
	rep.client = client;
	rep.ngpus = static_cast<std::uint32_t>(jobs_.at(*job).gpus.size());
	rep.chunk_size = engine_->chunk_size();
	rep.flags = clients_ ? 0 : GOS_HELLO_FLAG_KERNEL;
	GOS_LOG(log::info, "job " << *job << ": agent pid " << s.peer.pid << " rank " << req.rank << " connected");
	return {0, {}, raw(rep)};
}

Daemon::Reply Daemon::rank(Session &s, const proto::Frame &f)
{
	gos_req_rank req;
	if (auto why = proto::decode(f, req))
		return {-EINVAL, *why, {}};
	if (req.rank < 0 || req.local_rank < 0 || static_cast<std::uint32_t>(req.rank) >= req.world_size ||
	    static_cast<std::uint32_t>(req.local_rank) >= req.world_size || req.pad || !proto::terminated(req.node))
		return {-EINVAL, "a rank needs 0 <= rank, local rank < world size and a NUL-terminated node name", {}};
	if (s.stats.rank != req.rank) {
		// Counted so far under the old rank; from now on under the new one.
		jobs_.at(s.job).rank(s.stats.rank, s.stats.pid).add(s.stats);
		s.stats = RankStats{req.rank, s.peer.pid};
	}
	GOS_LOG(log::info, "job " << s.job << ": pid " << s.peer.pid << " is MPI rank " << req.rank << " of "
				  << req.world_size << " (local " << req.local_rank << ") on " << req.node);
	return {0, {}, {}};
}

// Rank 0's gather at MPI_Finalize: records for the job's report.
Daemon::Reply Daemon::rank_report(Session &s, const proto::Frame &f)
{
	gos_req_rank_report head;
	if (f.payload.size() < sizeof head)
		return {-EINVAL, "a rank report starts with its record count", {}};
	std::memcpy(&head, f.payload.data(), sizeof head);
	if (!head.count || head.count > GOS_RANK_REPORT_MAX || head.pad ||
	    f.payload.size() != sizeof head + std::size_t(head.count) * sizeof(gos_rank_record))
		return {-EINVAL, "a rank report holds 1 to " + std::to_string(GOS_RANK_REPORT_MAX) +
					 " records, exactly as many as it says", {}};
	std::vector<gos_rank_record> records(head.count);
	std::memcpy(records.data(), f.payload.data() + sizeof head, records.size() * sizeof(gos_rank_record));
	for (const auto &r : records)
		if (r.rank < 0 || !proto::terminated(r.node))
			return {-EINVAL, "a rank record needs a rank >= 0 and a NUL-terminated node name", {}};
	Job &job = jobs_.at(s.job);
	for (const auto &r : records)
		job.mpi_ranks[r.rank] = MpiRank{r.rank, r.local_rank, r.managed != 0, static_cast<pid_t>(r.pid), r.node,
					       r.device_bytes, r.host_bytes, r.evictions, r.returns, r.bytes_evicted,
					       r.bytes_returned, r.advice, r.pinned_bytes, r.exchanges};
	save(job);	// at MPI_Finalize the job may end any moment
	return {0, {}, {}};
}

Daemon::Reply Daemon::alloc(Session &s, const proto::Frame &f)
{
	gos_req_alloc req;
	if (auto why = proto::decode(f, req))
		return {-EINVAL, *why, {}};
	Job &job = jobs_.at(s.job);
	if (req.gpu >= job.gpus.size())
		return {-EINVAL, "GPU " + std::to_string(req.gpu) + " is not one of the job's " +
					 std::to_string(job.gpus.size()) + " GPU(s)", {}};
	if (req.flags & ~GOS_ALLOC_FLAG_UNEVICTABLE || req.pad)
		return {-EINVAL, "unknown allocation flags", {}};
	auto start = std::chrono::steady_clock::now();
	gos_alloc_result res{};
	int err = clients_->alloc(s.client, job.gpus[req.gpu].tenant, req.size, req.priority,
				 req.flags & GOS_ALLOC_FLAG_UNEVICTABLE ? GOS_ALLOC_UNEVICTABLE : 0, res);
	if (err == -EDQUOT)
		return {err, "the job's GPU memory limit would be exceeded", {}};
	if (err)
		return {err, "allocation refused: " + errno_text(err), {}};
	if (cfg_.policy.host_spill_limit && res.host_bytes) {
		std::uint64_t host = 0;
		for (const auto &[tenant, owner] : tenant_owner_) {
			gos_tenant_stats st{};
			if (!engine_->tenant_stats(tenant, st))
				host += st.host;
		}
		if (host > cfg_.policy.host_spill_limit) {
			clients_->free(s.client, res.buffer);
			return {-ENOMEM, "the node's host-RAM spill limit of " + format_bytes(cfg_.policy.host_spill_limit) +
						 " is reached", {}};
		}
	}
	job.latency.add(static_cast<std::uint64_t>(
		std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count()));
	s.stats.allocs++;
	s.stats.bytes_allocated += req.size;
	gos_rep_alloc rep{};
	rep.buffer = res.buffer;
	rep.device_bytes = res.device_bytes;
	rep.host_bytes = res.host_bytes;
	rep.waiting_bytes = res.waiting_bytes;
	rep.numa_node = discovery_.gpus[job.gpus[req.gpu].node_gpu].numa_node;
	return {0, {}, raw(rep)};
}

Daemon::Reply Daemon::free_buffer(Session &s, const proto::Frame &f)
{
	gos_req_buffer req;
	if (auto why = proto::decode(f, req))
		return {-EINVAL, *why, {}};
	int err = clients_->free(s.client, req.buffer);
	return {err, err ? "no such buffer of this process" : "", {}};
}

Daemon::Reply Daemon::set_priority(Session &s, const proto::Frame &f)
{
	gos_req_priority req;
	if (auto why = proto::decode(f, req))
		return {-EINVAL, *why, {}};
	int err = clients_->set_priority(s.client, req.buffer, req.offset, req.length, req.priority);
	return {err, err == -ENOENT ? "no such buffer of this process" : err ? "bad range or priority (0 to 15)" : "", {}};
}

Daemon::Reply Daemon::order_done(Session &s, const proto::Frame &f)
{
	gos_req_order_done req;
	if (auto why = proto::decode(f, req))
		return {-EINVAL, *why, {}};
	int err = clients_->order_done(s.client, req.order, req.ok != 0);
	auto it = s.orders.find(req.order);
	if (it != s.orders.end()) {
		if (!err && req.ok)
			(it->second.first == GOS_ORDER_EVICT ? s.stats.bytes_evicted : s.stats.bytes_returned) += it->second.second;
		s.orders.erase(it);
	}
	return {err, err ? "no such order outstanding (expired, or its buffer was freed): restore the placement "
			   "the daemon last gave": "", {}};
}

Daemon::Reply Daemon::activity(Session &s, const proto::Frame &f)
{
	gos_req_activity req;
	if (auto why = proto::decode(f, req))
		return {-EINVAL, *why, {}};
	Job &job = jobs_.at(s.job);
	if (req.gpu >= job.gpus.size())
		return {-EINVAL, "not one of the job's GPUs", {}};
	job.gpus[req.gpu].launches += req.launches;
	job.gpus[req.gpu].reports_activity = true;
	return {};
}

// The wire's placement codes are the engine's chunk states.
constexpr bool same_code(gos_place p, gos_chunk_state c) { return int(p) == int(c); }
static_assert(same_code(GOS_PLACE_DEVICE, GOS_CHUNK_DEVICE) && same_code(GOS_PLACE_HOST, GOS_CHUNK_HOST) &&
	      same_code(GOS_PLACE_EVICTING, GOS_CHUNK_EVICTING) && same_code(GOS_PLACE_RETURNING, GOS_CHUNK_RETURNING) &&
	      same_code(GOS_PLACE_WAITING, GOS_CHUNK_WAITING));

Daemon::Reply Daemon::placement(Session &s, const proto::Frame &f)
{
	gos_req_placement req;
	if (auto why = proto::decode(f, req))
		return {-EINVAL, *why, {}};
	if (!req.count || req.count > GOS_PLACEMENT_MAX)
		return {-EINVAL, "ask for 1 to " + std::to_string(GOS_PLACEMENT_MAX) + " chunks", {}};
	std::string states(req.count, '\0');
	int err = clients_->placement(s.client, req.buffer, req.first, req.count,
				     reinterpret_cast<std::uint8_t *>(states.data()));
	if (err == -ENOENT)
		return {err, "no such buffer of this process", {}};
	if (err)
		return {err, "chunks " + std::to_string(req.first) + " + " + std::to_string(req.count) +
				     " are not all in the buffer", {}};
	return {0, {}, std::move(states)};
}

Daemon::Reply Daemon::meminfo(Session &s, const proto::Frame &f)
{
	gos_req_meminfo req;
	if (auto why = proto::decode(f, req))
		return {-EINVAL, *why, {}};
	const Job &job = jobs_.at(s.job);
	if (req.gpu >= job.gpus.size() || req.pad)
		return {-EINVAL, "not one of the job's GPUs", {}};
	gos_tenant_stats ts{};
	gos_gpu_stats gs{};
	if (int err = engine_->tenant_stats(job.gpus[req.gpu].tenant, ts))
		return {err, "engine: " + errno_text(err), {}};
	if (int err = engine_->gpu_stats(job.gpus[req.gpu].node_gpu, gs))
		return {err, "engine: " + errno_text(err), {}};
	gos_rep_meminfo rep{};
	rep.allowed = ts.limit ? ts.limit : gs.capacity;
	rep.used = ts.demand;
	rep.entitlement = ts.entitlement;
	rep.device_bytes = ts.resident;
	rep.host_bytes = ts.host;
	rep.numa_node = discovery_.gpus[job.gpus[req.gpu].node_gpu].numa_node;
	return {0, {}, raw(rep)};
}

Daemon::Reply Daemon::stats(Session &s, const proto::Frame &)
{
	Job &job = jobs_.at(s.job);
	return {0, {}, build_report(folded(job), {}, discovery_.gpus).dump()};
}

Daemon::Reply Daemon::status(Session &, const proto::Frame &)
{
	return {0, {}, status_json().dump()};
}

Daemon::Reply Daemon::jobs(Session &, const proto::Frame &)
{
	return {0, {}, jobs_json().dump()};
}

Daemon::Reply Daemon::report(Session &s, const proto::Frame &f)
{
	gos_req_job req;
	if (auto why = proto::decode(f, req))
		return {-EINVAL, *why, {}};
	auto it = jobs_.find(req.job_id);
	if (it != jobs_.end()) {
		if (s.peer.uid != 0 && s.peer.uid != it->second.uid)
			return {-EACCES, "job " + std::to_string(req.job_id) + " belongs to another user", {}};
		return {0, {}, build_report(folded(it->second), {}, discovery_.gpus).dump()};
	}
	std::ifstream in(cfg_.policy.report_dir + "/job-" + std::to_string(req.job_id) + ".json");
	if (!in)
		return {-ENOENT, "no report for job " + std::to_string(req.job_id) + " on this node", {}};
	auto j = nlohmann::json::parse(in, nullptr, false);
	if (j.is_discarded())
		return {-EIO, "the stored report for job " + std::to_string(req.job_id) + " is unreadable", {}};
	if (s.peer.uid != 0 && j.value("uid", 0u) != s.peer.uid)
		return {-EACCES, "job " + std::to_string(req.job_id) + " belongs to another user", {}};
	return {0, {}, j.dump()};
}

Daemon::Reply Daemon::step_register(Session &, const proto::Frame &f)
{
	gos_req_step req;
	if (auto why = proto::decode(f, req))
		return {-EINVAL, *why, {}};
	if (!req.job_id)
		return {-EINVAL, "job id 0", {}};
	if (!req.ngpus || req.ngpus > GOS_MAX_STEP_GPUS)
		return {-EINVAL, "a step needs 1 to " + std::to_string(GOS_MAX_STEP_GPUS) + " GPUs", {}};
	if (!proto::terminated(req.partition) || !proto::terminated(req.account) || !proto::terminated(req.qos))
		return {-EINVAL, "partition, account or QOS name not terminated", {}};
	std::set<std::uint32_t> seen;
	for (std::uint32_t i = 0; i < req.ngpus; i++) {
		if (req.gpus[i] >= discovery_.gpus.size())
			return {-EINVAL, "GPU " + std::to_string(req.gpus[i]) + " does not exist on this node (it has " +
						 std::to_string(discovery_.gpus.size()) + ")", {}};
		if (!seen.insert(req.gpus[i]).second)
			return {-EINVAL, "GPU " + std::to_string(req.gpus[i]) + " listed twice", {}};
	}
	auto [it, created] = jobs_.try_emplace(req.job_id);
	Job &job = it->second;
	if (created) {
		job.id = req.job_id;
		job.uid = req.uid;
		job.partition = req.partition;
		job.account = req.account;
		job.qos = req.qos;
		job.factor_milli = req.factor_milli;
		job.size_limit = req.size_limit;
		job.started = unix_now();
	} else if (job.uid != req.uid) {
		return {-EPERM, "job " + std::to_string(req.job_id) + " is registered for another user", {}};
	} else if (job.ended) {
		return {-EBUSY, "job " + std::to_string(req.job_id) + " ended and its report is still pending", {}};
	}
	for (std::uint32_t i = 0; i < req.ngpus; i++)
		if (std::none_of(job.gpus.begin(), job.gpus.end(), [&](auto &g) { return g.node_gpu == req.gpus[i]; }))
		{
			JobGpu g;
			g.node_gpu = req.gpus[i];
			job.gpus.push_back(g);
		}
	job.steps.insert(req.step_id);
	ensure_tenants(job);
	bind_job(job);	// a new GPU: the job's bindings name one tenant more
	for (const auto &g : job.gpus)
		apply_policy(g.node_gpu);
	save(job);
	GOS_LOG(log::info, "job " << job.id << " step " << req.step_id << " registered on " << req.ngpus << " GPU(s)");
	return {};
}

std::map<std::uint64_t, Job>::iterator Daemon::find_step(std::uint64_t job, std::uint32_t step)
{
	auto it = jobs_.find(job);
	return it != jobs_.end() && it->second.steps.count(step) ? it : jobs_.end();
}

Daemon::Reply Daemon::no_step(std::uint64_t job, std::uint32_t step)
{
	return {-ENOENT, "no step " + std::to_string(step) + " of job " + std::to_string(job), {}};
}

Daemon::Reply Daemon::step_end(Session &, const proto::Frame &f)
{
	gos_req_step_ref req;
	if (auto why = proto::decode(f, req))
		return {-EINVAL, *why, {}};
	auto it = find_step(req.job_id, req.step_id);
	if (it == jobs_.end())
		return no_step(req.job_id, req.step_id);
	it->second.steps.erase(req.step_id);
	if (it->second.steps.empty()) {
		if (finish_job(it->second))
			jobs_.erase(it);
	} else {
		save(it->second);
	}
	return {};
}

// The epilog's word that the job is over, whatever steps did not say so
// (a slurmstepd killed before its exit hook).
Daemon::Reply Daemon::job_end(Session &, const proto::Frame &f)
{
	gos_req_job req;
	if (auto why = proto::decode(f, req))
		return {-EINVAL, *why, {}};
	auto it = jobs_.find(req.job_id);
	if (it == jobs_.end())
		return {-ENOENT, "job " + std::to_string(req.job_id) + " is not registered on this node", {}};
	if (!it->second.steps.empty())
		GOS_LOG(log::warning, "job " << req.job_id << " ended with " << it->second.steps.size()
					     << " step(s) that never said so");
	it->second.steps.clear();
	if (finish_job(it->second))
		jobs_.erase(it);
	return {};
}

Daemon::Reply Daemon::task_register(Session &, const proto::Frame &f)
{
	gos_req_task req;
	if (auto why = proto::decode(f, req))
		return {-EINVAL, *why, {}};
	auto it = find_step(req.job_id, req.step_id);
	if (it == jobs_.end())
		return no_step(req.job_id, req.step_id);
	if (req.pid <= 1)
		return {-EINVAL, "pid " + std::to_string(req.pid) + " cannot be a task", {}};
	Job &job = it->second;
	pid_t pid = static_cast<pid_t>(req.pid);
	job.pids.insert(pid);
	if (!job.cgroup)
		job.cgroup = job_cgroup_id(pid, job.id).value_or(0);
	save(job);
	if (int err = bind_job(job))
		return {err, "engine: cannot bind task " + std::to_string(pid) + " to job " + std::to_string(job.id) + ": " +
				     errno_text(err), {}};
	return {};
}

void Daemon::ensure_tenants(Job &job)
{
	for (std::uint32_t i = 0; i < job.gpus.size(); i++) {
		JobGpu &g = job.gpus[i];
		if (g.tenant)
			continue;
		if (int err = engine_->tenant_create(g.node_gpu, 100, 0, g.tenant))
			throw std::runtime_error("engine: cannot add job " + std::to_string(job.id) + " on GPU " +
						 std::to_string(g.node_gpu) + ": " + errno_text(err));
		tenant_owner_[g.tenant] = {job.id, i};
		job.engine_instance = engine_->instance();
	}
}

// After a restart: the job's tenants are still the engine's if the engine
// outlived the daemon (the kernel's, same module load) and each is on its
// GPU. Otherwise their last saved counters join the base, and
// ensure_tenants makes new ones.
void Daemon::adopt_tenants(Job &job)
{
	bool same_engine = engine_->instance() && job.engine_instance == engine_->instance();
	for (std::uint32_t i = 0; i < job.gpus.size(); i++) {
		JobGpu &g = job.gpus[i];
		gos_tenant_stats st{};
		if (g.tenant && same_engine && !tenant_owner_.count(g.tenant) && engine_->tenant_stats(g.tenant, st) == 0 &&
		    st.gpu == g.node_gpu) {
			tenant_owner_[g.tenant] = {job.id, i};
			GOS_LOG(log::info, "state: job " << job.id << " keeps tenant " << g.tenant << " on GPU " << g.node_gpu
							 << " with " << format_bytes(st.demand) << " allocated");
			continue;
		}
		g.base.add(g.live);
		g.live = {};
		g.tenant = 0;
	}
}

// Tells the engine which processes are the job's: its cgroup and its task
// pids, each to all of its tenants. The first failure is returned.
int Daemon::bind_job(const Job &job)
{
	std::vector<std::uint32_t> tenants;
	for (const auto &g : job.gpus)
		tenants.push_back(g.tenant);
	if (tenants.empty() || job.ended)
		return 0;
	int first = 0;
	auto bind = [&](pid_t pid, std::uint64_t cgroup) {
		int err = engine_->bind(pid, cgroup, tenants);
		if (err && !first)
			first = err;
		if (err)
			GOS_LOG(log::error, "engine: cannot bind " << (pid ? "task " + std::to_string(pid) : "cgroup " + std::to_string(cgroup))
							   << " to job " << job.id << ": " << errno_text(err));
	};
	if (job.cgroup)
		bind(0, job.cgroup);
	for (pid_t pid : job.pids)
		bind(pid, 0);
	return first;
}

void Daemon::unbind_job(const Job &job)
{
	if (job.cgroup)
		engine_->unbind(0, job.cgroup);
	for (pid_t pid : job.pids)
		engine_->unbind(pid, 0);
}

std::uint64_t Daemon::capacity(std::uint32_t node_gpu) const
{
	std::uint64_t mem = discovery_.gpus.at(node_gpu).memory;
	return mem > cfg_.start.reserve ? mem - cfg_.start.reserve : 0;
}

// Weights, minimums and limits of every job on a GPU: limits depend on
// everyone's weight, so they are set together. A limit is the factor times
// the job's nominal share: the balloon lowers an idle job's weight, which
// decides who is evicted first, but must not refuse its next allocation.
void Daemon::apply_policy(std::uint32_t node_gpu)
{
	struct Entry {
		JobGpu *g;
		JobPolicy p;
		const Job *job;
	};
	std::vector<Entry> on_gpu;
	double nominal_sum = 0;
	for (auto &[id, job] : jobs_)
		for (auto &g : job.gpus)
			if (g.node_gpu == node_gpu && g.tenant) {
				on_gpu.push_back({&g, policy_for(cfg_, job), &job});
				nominal_sum += on_gpu.back().p.weight;
			}
	std::uint64_t cap = capacity(node_gpu);
	for (const auto &e : on_gpu) {
		std::uint64_t limit = e.job->size_limit;
		if (!limit && e.p.factor > 0)
			limit = static_cast<std::uint64_t>(e.p.factor * static_cast<double>(cap) * e.p.weight / nominal_sum);
		double weight = e.g->deflated ? e.p.weight * cfg_.policy.balloon_idle_weight : e.p.weight;
		engine_->tenant_policy(e.g->tenant, engine_weight(weight), std::min<std::uint64_t>(limit, (1ULL << 48) - 1),
				       e.p.min_bytes(cap));
	}
}

std::vector<gos_tenant_stats> Daemon::live_stats(const Job &job)
{
	std::vector<gos_tenant_stats> out(job.gpus.size());
	for (std::size_t i = 0; i < job.gpus.size(); i++)
		if (job.gpus[i].tenant)
			engine_->tenant_stats(job.gpus[i].tenant, out[i]);
	return out;
}

Job Daemon::snapshot(const Job &job)
{
	Job copy = job;
	auto live = live_stats(job);
	for (std::size_t i = 0; i < copy.gpus.size(); i++)
		if (copy.gpus[i].tenant)
			copy.gpus[i].live = CounterBase::of(live[i]);
	for (const auto &[id, s] : sessions_)
		if (s->job == job.id)
			copy.rank(s->stats.rank, s->stats.pid).add(s->stats);
	return copy;
}

Job Daemon::folded(const Job &job)
{
	Job copy = snapshot(job);
	for (auto &g : copy.gpus) {
		g.base.add(g.live);
		g.live = {};
	}
	return copy;
}

void Daemon::save(const Job &job)
{
	try {
		Job now = snapshot(job);
		std::string text = to_json(now).dump();
		// Checkpoints run every second; only changed records are written.
		if (saved_[job.id] == text)
			return;
		make_dirs(cfg_.start.state_dir, 0700);
		store_.save(now);
		saved_[job.id] = text;
	} catch (const std::exception &e) {
		// A full disk must not take the node down: the in-memory ledger
		// stays right, only restart safety is at risk until it saves.
		GOS_LOG(log::error, "state: cannot save job " << job.id << ": " << e.what());
	}
}

// Ends a job: releases its processes and tenants once, then writes its
// report. A report that cannot be written (full disk, say) keeps the job
// as "ended, report pending"; persist_tick retries, so nothing is lost.
bool Daemon::finish_job(Job &job)
{
	if (!job.ended) {
		// Processes of a finished job are gone or going; release them.
		for (auto [id, s] : std::map<std::uint32_t, Session *>(sessions_))
			if (s->job == job.id) {
				detach(*s);
				attach(*s);	// the connection stays; its process is done
				s->job = 0;
			}
		job = folded(job);	// live counters into the record, for good
		unbind_job(job);
		std::set<std::uint32_t> gpus;
		for (auto &g : job.gpus) {
			if (g.tenant)
				retire_tenant(g.tenant);
			g.tenant = 0;	// no longer counted by apply_policy
			gpus.insert(g.node_gpu);
		}
		for (auto g : gpus)
			apply_policy(g);
		job.ended = unix_now();
	}
	nlohmann::json rep = build_report(job, {}, discovery_.gpus);
	try {
		write_report(cfg_.policy.report_dir, rep, cfg_.policy.report_summary);
	} catch (const std::exception &e) {
		GOS_LOG(log::error, "report for job " << job.id << " not written: " << e.what() << "; will retry");
		save(job);
		return false;
	}
	store_.remove(job.id);
	saved_.erase(job.id);
	GOS_LOG(log::notice, report_summary(rep));
	return true;
}

// A tenant whose job ended. In the kernel a process that outlived its job
// may still hold buffers there; the tenant then stays, at the lowest
// weight, until persist_tick finds it empty.
void Daemon::retire_tenant(std::uint32_t tenant)
{
	tenant_owner_.erase(tenant);
	if (engine_->tenant_destroy(tenant) == -EBUSY) {
		engine_->tenant_policy(tenant, 1, 0, 0);
		if (retiring_.insert(tenant).second)
			GOS_LOG(log::warning, "engine: tenant " << tenant << " still holds memory of a process that outlived "
								  "its job; it is removed once that memory is freed");
	} else {
		retiring_.erase(tenant);
	}
}

void Daemon::flush_orders()
{
	for (auto &[client, s] : by_client_) {
		gos_message msgs[64];
		int n;
		while ((n = clients_->read_messages(client, msgs, 64)) > 0) {
			for (int i = 0; i < n; i++) {
				const gos_message &m = msgs[i];
				auto owner = tenant_owner_.find(m.tenant);
				gos_wire_order o{};
				o.id = m.id;
				o.kind = m.kind;
				o.gpu = owner == tenant_owner_.end() ? 0 : owner->second.second;
				o.buffer = m.buffer;
				o.offset = m.offset;
				o.length = m.length;
				o.device_bytes = m.device_bytes;
				o.host_bytes = m.host_bytes;
				o.entitlement = m.entitlement;
				o.numa_node = -1;
				auto job = jobs_.find(s->job);
				if (job != jobs_.end() && o.gpu < job->second.gpus.size())
					o.numa_node = discovery_.gpus[job->second.gpus[o.gpu].node_gpu].numa_node;
				if (m.id)
					s->orders[m.id] = {m.kind, m.length};
				if (m.kind == GOS_MSG_ADVICE) {
					gos_tenant_stats ts{};
					if (!engine_->tenant_stats(m.tenant, ts))
						o.oversub_ns = ts.oversub_ns;	// how long, for the advice record
					if (job != jobs_.end()) {
						s->stats.advice++;
						job->second.advice_events++;
					}
				}
				s->send(proto::encode(GOS_WIRE_ORDER, 0, o));
			}
		}
	}
}

void Daemon::tick()
{
	if (clients_)
		clients_->tick();	// the kernel's own delayed work runs it there
	flush_orders();
}

void Daemon::balloon_tick()
{
	if (!cfg_.policy.balloon)
		return;
	std::set<std::uint32_t> changed;
	for (auto &[id, job] : jobs_)
		for (auto &g : job.gpus) {
			// Jobs whose agents never report activity are not judged idle.
			if (!g.reports_activity || !g.tenant)
				continue;
			auto active = g.activity.observe(g.launches > 0);
			g.launches = 0;
			if (!active)
				continue;
			gos_tenant_stats st{};
			engine_->tenant_stats(g.tenant, st);
			if (!g.deflated && *active < cfg_.policy.balloon_low && st.resident > 0) {
				g.deflated = true;
				changed.insert(g.node_gpu);
				GOS_LOG(log::info, "balloon: job " << id << " idle on GPU " << g.node_gpu << "; weight lowered");
			} else if (g.deflated && *active > cfg_.policy.balloon_high) {
				g.deflated = false;
				changed.insert(g.node_gpu);
				GOS_LOG(log::info, "balloon: job " << id << " active again on GPU " << g.node_gpu);
			}
		}
	for (auto g : changed)
		apply_policy(g);
	if (!changed.empty())
		tick();
}

void Daemon::usage_tick()
{
	if (!discovery_.usage)
		return;
	std::set<pid_t> ours;
	for (auto &[id, s] : sessions_)
		if (s->job)
			ours.insert(s->peer.pid);
	for (const Gpu &g : discovery_.gpus) {
		std::uint64_t outside = 0;
		for (const ProcessUse &p : discovery_.usage->processes(g))
			if (!ours.count(p.pid))
				outside += p.bytes;
		engine_->gpu_set_external(g.index, outside);
	}
	flush_orders();
}

void Daemon::persist_tick()
{
	for (std::uint32_t t : std::set<std::uint32_t>(retiring_))
		retire_tenant(t);
	for (auto it = jobs_.begin(); it != jobs_.end();) {
		if (it->second.ended && finish_job(it->second)) {
			it = jobs_.erase(it);
			continue;
		}
		save(it->second);
		++it;
	}
}

void Daemon::export_tick()
{
	if (cfg_.policy.exporter_textfile.empty())
		return;
	std::ostringstream m;
	m << "# HELP gpuoversub_gpu_capacity_bytes GPU memory the engine manages.\n"
	     "# TYPE gpuoversub_gpu_capacity_bytes gauge\n";
	for (const Gpu &g : discovery_.gpus) {
		gos_gpu_stats st{};
		engine_->gpu_stats(g.index, st);
		m << "gpuoversub_gpu_capacity_bytes{gpu=\"" << g.index << "\"} " << st.capacity << "\n"
		  << "gpuoversub_gpu_used_bytes{gpu=\"" << g.index << "\"} " << st.used << "\n"
		  << "gpuoversub_gpu_external_bytes{gpu=\"" << g.index << "\"} " << st.external << "\n";
	}
	m << "# HELP gpuoversub_job_resident_bytes Job memory on the GPU.\n# TYPE gpuoversub_job_resident_bytes gauge\n";
	for (auto &[id, job] : jobs_) {
		auto live = live_stats(job);
		for (std::size_t i = 0; i < job.gpus.size(); i++) {
			std::string l = "{job=\"" + std::to_string(id) + "\",gpu=\"" + std::to_string(job.gpus[i].node_gpu) + "\"}";
			CounterBase c = job.gpus[i].base;
			c.add(CounterBase::of(live[i]));
			m << "gpuoversub_job_resident_bytes" << l << " " << live[i].resident << "\n"
			  << "gpuoversub_job_host_bytes" << l << " " << live[i].host << "\n"
			  << "gpuoversub_job_entitlement_bytes" << l << " " << live[i].entitlement << "\n"
			  << "gpuoversub_job_evicted_bytes_total" << l << " " << c.bytes_evicted << "\n"
			  << "gpuoversub_job_returned_bytes_total" << l << " " << c.bytes_returned << "\n"
			  << "gpuoversub_job_throttled" << l << " " << live[i].throttled << "\n";
		}
	}
	try {
		write_file_atomically(cfg_.policy.exporter_textfile, m.str(), 0644);
	} catch (const std::exception &e) {
		GOS_LOG(log::warning, "exporter: " << e.what());
	}
}

std::vector<std::string> Daemon::reload(const config::Config &next)
{
	std::vector<std::string> kept;
	for (const auto &key : config::restart_only_changes(cfg_.start, next.start))
		kept.push_back(key + " changes take effect when gpuoversubd restarts");
	cfg_.policy = next.policy;
	for (const Gpu &g : discovery_.gpus)
		apply_policy(g.index);
	tick();
	return kept;
}

void Daemon::shutdown()
{
	persist_tick();
}

nlohmann::json Daemon::status_json()
{
	nlohmann::json gpus = nlohmann::json::array();
	for (const Gpu &g : discovery_.gpus) {
		gos_gpu_stats st{};
		engine_->gpu_stats(g.index, st);
		nlohmann::json tenants = nlohmann::json::array();
		for (auto &[id, job] : jobs_)
			for (const auto &jg : job.gpus) {
				if (jg.node_gpu != g.index || !jg.tenant)
					continue;
				gos_tenant_stats ts{};
				engine_->tenant_stats(jg.tenant, ts);
				tenants.push_back({{"job", id}, {"weight", ts.weight / 100.0}, {"limit", ts.limit},
						   {"min_bytes", ts.min_bytes}, {"demand", ts.demand},
						   {"entitlement", ts.entitlement}, {"resident", ts.resident},
						   {"host", ts.host}, {"throttled", ts.throttled != 0}, {"idle", jg.deflated},
						   {"oversubscribed_s", static_cast<double>(ts.oversub_ns) / 1e9}});
			}
		gpus.push_back({{"gpu", g.index}, {"pci_bus_id", g.pci_bus_id}, {"numa_node", g.numa_node},
				{"memory", g.memory}, {"simulated", g.simulated}, {"capacity", st.capacity},
				{"used", st.used}, {"external", st.external}, {"evicting", st.evicting},
				{"waiting", st.waiting}, {"tenants", tenants}});
	}
	std::size_t agents = 0;
	for (auto &[id, s] : sessions_)
		agents += s->job != 0;	// said hello (in kernel mode without an engine client)
	return {{"engine", engine_->name()}, {"gpu_source", discovery_.source}, {"jobs", jobs_.size()},
		{"agents", agents}, {"gpus", gpus}};
}

nlohmann::json Daemon::jobs_json()
{
	nlohmann::json out = nlohmann::json::array();
	for (auto &[id, job] : jobs_) {
		auto live = live_stats(job);
		std::uint64_t resident = 0, host = 0;
		nlohmann::json gpus = nlohmann::json::array();
		for (std::size_t i = 0; i < job.gpus.size(); i++) {
			resident += live[i].resident;
			host += live[i].host;
			gpus.push_back(job.gpus[i].node_gpu);
		}
		out.push_back({{"job", id}, {"uid", job.uid}, {"partition", job.partition}, {"account", job.account},
			       {"qos", job.qos}, {"steps", job.steps.size()}, {"tasks", job.pids.size()}, {"gpus", gpus},
			       {"resident", resident}, {"host", host}, {"started", job.started},
			       {"report_pending", job.ended != 0}});
	}
	return out;
}

} // namespace gos::gpud
