#include "daemon/gpud/ledger.hpp"

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <set>

#include "common/util/log.hpp"
#include "daemon/gpud/identity.hpp"
#include "daemon/gpud/answer.hpp"

namespace gos::gpud {
namespace {

std::int64_t unix_now()
{
	return static_cast<std::int64_t>(std::time(nullptr));
}

Refusal no_step(std::uint64_t job, std::uint32_t step)
{
	return {-ENOENT, "no step " + std::to_string(step) + " of job " + std::to_string(job)};
}

} // namespace

JobLedger::JobLedger(const config::Config &cfg, const std::vector<Gpu> &gpus, EngineControl &engine,
		     PolicyApplier &policy, std::function<void(std::uint64_t)> release)
	: cfg_(cfg), gpus_(gpus), engine_(engine), policy_(policy), release_(std::move(release)),
	  store_(cfg.start.state_dir), reports_(cfg, gpus), tenants_(engine), cgroup_mount_(cgroup2_mount())
{
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
		Resumption restart{unix_now(), tenants_.adopt(job)};
		if (job.restarts.size() < Job::max_restarts_kept)
			job.restarts.push_back(std::move(restart));
		else
			job.restarts_omitted++;
		if (auto refused = tenants_.ensure(job))	// its GPUs without a tenant stay so: nothing counts them
			GOS_LOG(log::error, "state: job " << id << ": " << refused->why);
		tenants_.bind(job);
		save(job);	// a second restart must still know of this one
		GOS_LOG(log::notice, "state: resumed job " << id << " with " << job.steps.size() << " step(s) and "
							   << job.tasks.size() << " task(s)");
	}
	tenants_.sweep_unowned();
	policy_.apply_all(jobs_);
}

// A job the daemon could not save would be lost by a restart: the plugin
// hears so now, rather than success, and nothing of the step stays.
std::optional<Refusal> JobLedger::register_step(const gos_req_step &req)
{
	const std::string job_name = "job " + std::to_string(req.job_id);
	Job *known = find(req.job_id);
	if (known && known->uid != req.uid)
		return Refusal{-EPERM, job_name + " is registered for another user"};
	if (known && known->ended)
		return Refusal{-EBUSY, job_name + " ended and its report is still pending"};
	if (known)
		forget_tasks(*known);	// the kernel binds only processes that exist
	Job &job = known ? *known : create(req);
	// What a step that cannot be saved takes back.
	const std::size_t had_gpus = job.gpus.size();
	const std::int64_t was_registered = job.registered;
	const bool new_step = job.steps.insert(req.step_id).second;
	add_gpus(job, req);
	auto refused = admit_step(job);
	if (!refused) {
		GOS_LOG(log::info, job_name << " step " << req.step_id << " registered on " << req.ngpus << " GPU(s)");
		return std::nullopt;
	}
	// Whatever refused it, the plugin hears -EIO: the step is not kept.
	refused->status = -EIO;
	GOS_LOG(log::error, job_name << " step " << req.step_id << " not registered: " << refused->why);
	if (!known) {
		discard(req.job_id);
		return refused;
	}
	take_back_gpus(job, had_gpus);
	if (new_step)
		job.steps.erase(req.step_id);
	job.registered = was_registered;
	return refused;
}

// A task the daemon could not save would be lost by a restart: the plugin
// hears so now, rather than success, and nothing of it stays.
std::optional<Refusal> JobLedger::register_task(std::uint64_t id, std::uint32_t step, pid_t pid)
{
	Job *job = find_step(id, step);
	if (!job)
		return no_step(id, step);
	auto now = proc_stat(pid);
	if (!now)
		return Refusal{-ESRCH, "no process " + std::to_string(pid) + " to register as a task of job " +
					       std::to_string(id)};
	forget_tasks(*job);	// an exited task whose pid this process may reuse
	// What a task that cannot be saved takes back.
	auto was_tasks = job->tasks;
	auto was_registered = job->registered;
	auto was_cgroup = job->cgroup;
	job->tasks[pid] = Task{now->start, step};
	job->registered = unix_now();
	// The task slurmstepd names is in its job's cgroup: what ties a SLUID's
	// cgroup, which names no job, to this one.
	if (!job->cgroup)
		if (auto cg = slurm_job_cgroup(pid, slurm_cgroups()); cg && (cg->job == id || !cg->job))
			job->cgroup = cg->id;
	if (auto refused = save(*job)) {
		job->tasks = std::move(was_tasks);
		job->registered = was_registered;
		job->cgroup = was_cgroup;
		return Refusal{-EIO, "task " + std::to_string(pid) + " not saved, so not registered: " + refused->why};
	}
	if (int err = tenants_.bind(*job))
		return Refusal{err, "engine: cannot bind task " + std::to_string(pid) + " to job " + std::to_string(id) +
					    ": " + errno_text(err)};
	return std::nullopt;
}

std::optional<Refusal> JobLedger::end_step(std::uint64_t id, std::uint32_t step)
{
	Job *job = find_step(id, step);
	if (!job)
		return no_step(id, step);
	forget_tasks(*job, step);
	job->steps.erase(step);
	if (job->steps.empty())
		end(id);
	else
		save(*job);
	return std::nullopt;
}

// Said again (an epilog run twice, a retry after a crash), it is done.
std::optional<Refusal> JobLedger::end_job(std::uint64_t id)
{
	Job *job = find(id);
	if (!job && reports_.written(id))
		return std::nullopt;
	if (!job)
		return Refusal{-ENOENT, "job " + std::to_string(id) + " is not registered on this node"};
	if (!job->ended) {	// else its report is pending: tried again now
		if (!job->steps.empty())
			GOS_LOG(log::warning, "job " << id << " ended with " << job->steps.size() << " step(s) that never said so");
		job->steps.clear();
	}
	end(id);
	return std::nullopt;
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
	if (!cg)
		return std::nullopt;
	for (const auto &[id, job] : jobs_)
		if (!job.ended && (id == cg->job || (job.cgroup && job.cgroup == cg->id)))
			return id;
	return std::nullopt;
}

// Forgets the job's tasks that exited, and all of step's if given, and
// lets the engine forget them too.
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

// A new job's record, from its first step's registration.
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

// The step's GPUs the job does not have yet, with the shards Slurm gave it
// on each.
void JobLedger::add_gpus(Job &job, const gos_req_step &req)
{
	for (std::uint32_t i = 0; i < req.ngpus; i++) {
		if (std::any_of(job.gpus.begin(), job.gpus.end(), [&](auto &g) { return g.node_gpu == req.gpus[i]; }))
			continue;
		JobGpu g;
		g.node_gpu = req.gpus[i];
		g.shards = {req.shards_held[i], req.shards_total[i], req.shards_reason};
		if (g.shards.reason.empty() && g.shards.held > g.shards.total)
			g.shards.reason = "the plugin sent " + std::to_string(g.shards.held) + " of " +
					  std::to_string(g.shards.total) + " shards";
		job.gpus.push_back(g);
	}
}

// The step admitted: tenants for the job's GPUs, its processes bound to
// all of them, every GPU's policy set again, the record saved. Refused if
// the engine refuses a tenant or the record cannot be saved; the caller
// takes the step back.
std::optional<Refusal> JobLedger::admit_step(Job &job)
{
	job.registered = unix_now();
	if (auto refused = tenants_.ensure(job))
		return refused;
	tenants_.bind(job);	// a new GPU: the job's bindings name one tenant more
	for (const auto &g : job.gpus)
		policy_.apply(g.node_gpu, jobs_);
	if (auto refused = save(job))
		return Refusal{refused->status,
			       "job " + std::to_string(job.id) + " not saved, so not registered: " + refused->why};
	return std::nullopt;
}

// A step's new GPUs taken back: the job's processes bound to the tenants
// it had, the new tenants retired, and the policy of every GPU the step
// touched set again as it was.
void JobLedger::take_back_gpus(Job &job, std::size_t kept)
{
	std::set<std::uint32_t> touched;
	for (const auto &g : job.gpus)
		touched.insert(g.node_gpu);
	std::vector<JobGpu> added(job.gpus.begin() + static_cast<std::ptrdiff_t>(kept), job.gpus.end());
	job.gpus.resize(kept);
	tenants_.bind(job);	// before the tenants go: none is bound then
	for (const auto &g : added)
		if (g.tenant)
			tenants_.retire(g.tenant);
	for (auto g : touched)
		policy_.apply(g, jobs_);
}

void JobLedger::end(std::uint64_t job)
{
	auto it = jobs_.find(job);
	if (it != jobs_.end() && finish(it->second))
		jobs_.erase(it);
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

// The record if it changed, and the job's MPI ranks if they did.
std::optional<Refusal> JobLedger::save(Job &job)
{
	std::string why = store_.save(with_live_counters(engine_, job));
	if (!why.empty())
		return Refusal{-EIO, why};
	job.mpi_ranks_unsaved = false;
	return std::nullopt;
}

// Its processes and tenants let go, its live counters folded into the
// record for good, and the job marked ended (in memory): no policy counts
// it any more. Returns its GPUs, whose policy the caller sets again.
std::set<std::uint32_t> JobLedger::retire(Job &job)
{
	release_(job.id);	// its processes are gone or going
	job = gpud::folded(engine_, job);
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

// Drops a job whose first registration could not be saved: its processes
// and tenants are let go, and no report is written.
void JobLedger::discard(std::uint64_t job)
{
	auto it = jobs_.find(job);
	if (it == jobs_.end())
		return;
	for (auto g : retire(it->second))
		policy_.apply(g, jobs_);
	store_.remove(job);
	jobs_.erase(it);
}

// Retires the job once, saves its record marked ended, then writes its
// report. A report that cannot be written (full disk, say) keeps the job
// as "ended, report pending"; persist retries, so nothing is lost. The
// mark comes first, so a crash at any point after it resumes the job as
// ended, never as running.
bool JobLedger::finish(Job &job)
{
	if (!job.ended)
		for (auto g : retire(job))
			policy_.apply(g, jobs_);
	save(job);	// the ended mark; unchanged when a pending report is retried
	if (!reports_.write(job, weights(job)))
		return false;
	store_.remove(job.id);
	return true;
}

} // namespace gos::gpud
