#include "daemon/gpud/ledger.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <set>

#include "common/util/atomic_file.hpp"
#include "common/util/log.hpp"
#include "daemon/gpud/identity.hpp"
#include "daemon/gpud/report.hpp"

namespace gos::gpud {
namespace {

std::int64_t unix_now()
{
	return static_cast<std::int64_t>(std::time(nullptr));
}

} // namespace

JobLedger::JobLedger(const config::Config &cfg, const std::vector<Gpu> &gpus, EngineControl &engine,
		     PolicyApplier &policy, std::function<void(std::uint64_t)> release)
	: cfg_(cfg), gpus_(gpus), engine_(engine), policy_(policy), release_(std::move(release)),
	  store_(cfg.start.state_dir), tenants_(engine), cgroup_mount_(cgroup2_mount())
{
	const char *fault = std::getenv("GPUOVERSUBD_FAULT");
	kill_after_report_ = fault && std::string(fault) == "kill-after-report";
}

void JobLedger::resume()
{
	std::vector<std::string> problems;
	jobs_ = store_.load_all(problems);
	for (const auto &p : problems)
		GOS_LOG(log::error, "state: " << p);
	for (auto &[id, job] : jobs_) {
		if (job.ended)
			continue;	// report pending: persist retries it
		bool fits = std::all_of(job.gpus.begin(), job.gpus.end(),
					[&](const JobGpu &g) { return g.node_gpu < gpus_.size(); });
		if (!fits) {
			GOS_LOG(log::error, "state: job " << id << " names a GPU this node no longer has; its record is kept but ignored");
			continue;
		}
		forget_tasks(job);	// pids that may name other processes now
		job.resumed = true;
		DaemonRestart restart{unix_now(), tenants_.adopt(job)};
		if (job.restarts.size() < Job::max_restarts_kept)
			job.restarts.push_back(std::move(restart));
		else
			job.restarts_omitted++;
		tenants_.ensure(job);
		tenants_.bind(job);
		save(job);	// a second restart must still know of this one
		GOS_LOG(log::notice, "state: resumed job " << id << " with " << job.steps.size() << " step(s) and "
							   << job.tasks.size() << " task(s)");
	}
	tenants_.sweep_unowned();
	policy_.apply_all(jobs_);
}

Job *JobLedger::find(std::uint64_t job)
{
	auto it = jobs_.find(job);
	return it == jobs_.end() ? nullptr : &it->second;
}

Job *JobLedger::find_step(std::uint64_t job, std::uint32_t step)
{
	Job *j = find(job);
	return j && j->steps.count(step) ? j : nullptr;
}

std::optional<std::uint64_t> JobLedger::job_of_pid(pid_t pid)
{
	std::optional<std::uint64_t> found;
	auto known = [&](pid_t p, std::uint64_t start) {
		for (auto &[id, job] : jobs_) {
			auto task = job.tasks.find(p);
			if (job.ended || task == job.tasks.end())
				continue;
			if (task->second.start == start) {
				found = id;
				return true;
			}
			forget_tasks(job);	// that task exited: p is another process now
		}
		return false;
	};
	if (registered_ancestor(pid, known))
		return found;
	// Slurm's cgroup plugin puts every task under its job's cgroup, which
	// a process cannot leave by itself.
	auto cg = slurm_job_cgroup(pid, slurm_cgroups());
	if (cg && jobs_.count(cg->job) && !jobs_.at(cg->job).ended)
		return cg->job;
	return std::nullopt;
}

void JobLedger::forget_tasks(Job &job, std::optional<std::uint32_t> step)
{
	bool changed = false;
	for (auto it = job.tasks.begin(); it != job.tasks.end();) {
		auto now = proc_stat(it->first);
		if (it->second.step != step && now && now->start == it->second.start) {
			++it;
			continue;
		}
		engine_.unbind(it->first, 0);
		it = job.tasks.erase(it);
		changed = true;
	}
	if (changed)
		save(job);
}

Job &JobLedger::create(const gos_req_step &req)
{
	Job &job = jobs_[req.job_id];
	job.id = req.job_id;
	job.uid = req.uid;
	job.partition = req.partition;
	job.account = req.account;
	job.qos = req.qos;
	job.factor_milli = req.factor_milli;
	job.size_limit = req.size_limit;
	job.started = unix_now();
	return job;
}

RankStats *JobLedger::counters(std::uint64_t job, int rank, pid_t pid)
{
	Job *j = find(job);
	return j ? &j->rank(rank, pid) : nullptr;
}

std::string JobLedger::admit(Job &job)
{
	forget_tasks(job);	// the kernel binds only processes that exist
	job.registered = unix_now();
	tenants_.ensure(job);
	tenants_.bind(job);	// a new GPU: the job's bindings name one tenant more
	for (const auto &g : job.gpus)
		policy_.apply(g.node_gpu, jobs_);
	return save(job);
}

void JobLedger::add_task(Job &job, pid_t pid, const Task &task)
{
	forget_tasks(job);
	job.tasks[pid] = task;
	job.registered = unix_now();
}

void JobLedger::end(std::uint64_t job)
{
	auto it = jobs_.find(job);
	if (it != jobs_.end() && finish(it->second))
		jobs_.erase(it);
}

bool JobLedger::reported(std::uint64_t job) const
{
	struct stat st{};
	return !jobs_.count(job) &&
	       ::stat(report_path(cfg_.policy.report_dir, job).c_str(), &st) == 0 &&
	       S_ISREG(st.st_mode);
}

void JobLedger::reap(const std::map<std::uint64_t, std::string> &gone)
{
	std::set<std::uint32_t> gpus;
	for (const auto &[id, reason] : gone) {
		Job *job = find(id);
		if (!job || job->ended)
			continue;
		job->end_reason = reason;
		gpus.merge(retire(*job));
	}
	for (auto g : gpus)
		policy_.apply(g, jobs_);
}

// A few reports per checkpoint, so that reaping many jobs at once never
// holds the event loop for long.
void JobLedger::persist()
{
	constexpr int reports_per_checkpoint = 16;
	int reports = 0;
	tenants_.retry_retiring();
	for (auto it = jobs_.begin(); it != jobs_.end();) {
		if (!it->second.ended)
			save(it->second);
		else if (reports++ < reports_per_checkpoint && finish(it->second)) {
			it = jobs_.erase(it);
			continue;
		}
		++it;	// an ended job waiting its turn: resumed before it, it is reaped again
	}
}

std::vector<gos_tenant_stats> JobLedger::live_stats(const Job &job)
{
	std::vector<gos_tenant_stats> out(job.gpus.size());
	for (std::size_t i = 0; i < job.gpus.size(); i++)
		if (job.gpus[i].tenant)
			engine_.tenant_stats(job.gpus[i].tenant, out[i]);
	return out;
}

Job JobLedger::snapshot(const Job &job)
{
	Job copy = job;
	auto live = live_stats(job);
	for (std::size_t i = 0; i < copy.gpus.size(); i++)
		if (copy.gpus[i].tenant)
			copy.gpus[i].live = CounterBase::of(live[i]);
	return copy;
}

Job JobLedger::folded(const Job &job)
{
	Job copy = snapshot(job);
	for (auto &g : copy.gpus) {
		g.base.add(g.live);
		g.live = {};
	}
	return copy;
}

std::string JobLedger::save(Job &job)
{
	try {
		if (job.mpi_ranks_unsaved) {
			make_dirs(cfg_.start.state_dir, 0700);
			store_.save_ranks(job);
			job.mpi_ranks_unsaved = false;
		}
		Job now = snapshot(job);
		std::string text = to_json(now).dump();
		// Checkpoints run every second; only changed records are written.
		if (saved_[job.id] == text)
			return "";
		make_dirs(cfg_.start.state_dir, 0700);
		store_.save(now);
		saved_[job.id] = text;
		return "";
	} catch (const std::exception &e) {
		// A full disk must not take the node down: the in-memory ledger
		// stays right, only restart safety is at risk until it saves.
		GOS_LOG(log::error, "state: cannot save job " << job.id << ": " << e.what());
		return e.what();
	}
}

// Its processes and tenants let go, its live counters folded into the
// record for good, and the job marked ended (in memory): no policy counts
// it any more. Returns its GPUs, whose policy the caller sets again.
std::set<std::uint32_t> JobLedger::retire(Job &job)
{
	release_(job.id);	// its processes are gone or going
	job = folded(job);
	tenants_.unbind(job);
	std::set<std::uint32_t> gpus;
	for (auto &g : job.gpus) {
		if (g.tenant)
			tenants_.retire(g.tenant);
		g.tenant = 0;
		gpus.insert(g.node_gpu);
	}
	job.ended = unix_now();
	return gpus;
}

void JobLedger::discard(std::uint64_t job)
{
	auto it = jobs_.find(job);
	if (it == jobs_.end())
		return;
	for (auto g : retire(it->second))
		policy_.apply(g, jobs_);
	store_.remove(job);
	saved_.erase(job);
	jobs_.erase(it);
}

// Retires the job once, saves its record marked ended, then writes its
// report. A report that cannot be written (full disk, say)
// keeps the job as "ended, report pending"; persist retries, so nothing is
// lost. The mark comes first, so a crash at any point after it resumes
// the job as ended, never as running.
bool JobLedger::finish(Job &job)
{
	if (!job.ended)
		for (auto g : retire(job))
			policy_.apply(g, jobs_);
	save(job);	// the ended mark; unchanged when a pending report is retried
	report::Report rep = build_report(job, {}, gpus_);
	rep.weights = weights(job).get<std::vector<report::GpuWeight>>();
	try {
		write_report(cfg_.policy.report_dir, rep, cfg_.policy.report_summary);
	} catch (const std::exception &e) {
		// Retried every checkpoint; said once, then once a minute.
		auto limit = report_failures_.try_emplace(job.id, std::chrono::minutes(1)).first;
		GOS_LOG_LIMITED(limit->second, log::error,
				"report for job " << job.id << " not written: " << e.what() << "; will retry");
		return false;
	}
	if (kill_after_report_)
		::raise(SIGKILL);
	store_.remove(job.id);
	saved_.erase(job.id);
	report_failures_.erase(job.id);
	GOS_LOG(log::notice, report_summary(rep));
	return true;
}

} // namespace gos::gpud
