#include "daemon/gpud/reconciler.hpp"

#include <dirent.h>

#include <cctype>
#include <ctime>
#include <vector>

#include "common/util/log.hpp"
#include "daemon/gpud/identity.hpp"

namespace gos::gpud {

bool ProcProbe::task_alive(pid_t pid, std::uint64_t start) const
{
	auto now = process_start(pid, proc_root_);
	return now && (!start || *now == start);
}

CgroupsInUse ProcProbe::cgroups_with_processes(const SlurmCgroups &where) const
{
	CgroupsInUse in_use;
	DIR *d = ::opendir(proc_root_);
	if (!d)
		return in_use;
	while (dirent *e = ::readdir(d)) {
		if (!std::isdigit(static_cast<unsigned char>(e->d_name[0])))
			continue;
		if (auto cg = slurm_job_cgroup(static_cast<pid_t>(std::atol(e->d_name)), where, proc_root_)) {
			if (cg->job)
				in_use.jobs.insert(cg->job);
			in_use.ids.insert(cg->id);
		}
	}
	::closedir(d);
	return in_use;
}

std::optional<std::string> gone_because(const Job &job, const JobSigns &signs, std::int64_t now, std::int64_t grace_s)
{
	if (job.ended || signs.task_alive || signs.in_cgroup || signs.connected || now - job.registered < grace_s)
		return std::nullopt;
	if (job.tasks.empty())
		return "no task was registered within " + std::to_string(grace_s) + " s of its step, and no process is in its cgroup";
	return "none of its " + std::to_string(job.tasks.size()) +
	       " task(s) is alive, no process is in its cgroup and no agent of it is connected";
}

std::optional<std::string> gone_in_slurm(const Job &job, const SlurmJob &slurm, std::int64_t now, std::int64_t grace_s)
{
	if (job.ended || slurm.is != SlurmJob::Is::finished || now - slurm.finished_since < grace_s ||
	    now - job.registered < grace_s)
		return std::nullopt;
	return "Slurm: job " + std::to_string(job.id) + " is " + slurm.state;
}

std::size_t Reconciler::sweep()
{
	auto grace_s = static_cast<std::int64_t>(cfg_.policy.stale_grace_ns / 1'000'000'000ULL);
	auto now = static_cast<std::int64_t>(std::time(nullptr));
	std::optional<CgroupsInUse> in_cgroups;	// read once, only if some job needs it
	std::map<std::uint64_t, std::string> gone;
	std::set<std::uint64_t> running;
	for (const auto &[id, job] : ledger_.jobs()) {
		if (job.ended)
			continue;
		if (auto why = gone_in_slurm(job, slurm_.job(id), now, grace_s)) {
			gone[id] = "reaped: " + *why;
			continue;
		}
		running.insert(id);
		JobSigns signs;
		for (const auto &[pid, task] : job.tasks) {
			if (probe_.task_alive(pid, task.start)) {
				signs.task_alive = true;
				break;
			}
		}
		signs.connected = !sessions_.of_job(id).empty();
		if (!signs.task_alive && !signs.connected) {
			if (!in_cgroups)
				in_cgroups = probe_.cgroups_with_processes(ledger_.slurm_cgroups());
			signs.in_cgroup = in_cgroups->hold(job);
		}
		if (auto why = gone_because(job, signs, now, grace_s)) {
			gone[id] = "reaped: " + *why;
			running.erase(id);
		}
	}
	slurm_.watch(std::move(running));
	for (const auto &[id, why] : gone)
		GOS_LOG(log::notice, "job " << id << " " << why);
	ledger_.reap(gone);
	return gone.size();
}

void Reconciler::take_slurm_names()
{
	for (auto &[id, job] : ledger_.jobs()) {
		auto names = slurm_.job(id).names;
		if (job.ended || !names || (job.partition == names->partition && job.account == names->account &&
					    job.qos == names->qos))
			continue;
		GOS_LOG(log::info, "job " << id << ": weighed by slurmctld's partition '" << names->partition
					  << "', account '" << names->account << "', QOS '" << names->qos << "'");
		job.partition = names->partition;
		job.account = names->account;
		job.qos = names->qos;
	}
}

} // namespace gos::gpud
