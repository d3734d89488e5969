#include "daemon/gpud/usage.hpp"

#include "common/util/log.hpp"
#include "daemon/gpud/identity.hpp"

namespace gos::gpud {

std::optional<std::uint64_t> OutsideUse::job_of(pid_t pid, std::map<pid_t, Seen> &now)
{
	auto start = process_start(pid);
	if (!start)
		return std::nullopt;
	if (auto it = now.find(pid); it != now.end() && it->second.start == *start)
		return it->second.job;
	// Only a job found is kept: a process of none is asked again, since it
	// may be adopted into one later (pam_slurm_adopt moves it into the
	// job's cgroup) or be seen before its job's task is registered.
	auto it = seen_.find(pid);
	Seen s = it != seen_.end() && it->second.start == *start && it->second.job ? it->second
										 : Seen{*start, ledger_.job_of_pid(pid)};
	now[pid] = s;
	return s.job;
}

std::uint32_t OutsideUse::tenant_of(std::uint64_t id, std::uint32_t gpu)
{
	if (const Job *job = ledger_.find(id))
		for (const JobGpu &jg : job->gpus)
			if (jg.node_gpu == gpu)
				return jg.tenant;
	return 0;	// gone, or the job has no tenant there
}

void OutsideUse::measure()
{
	if (!discovery_.usage)
		return;
	std::set<pid_t> ours = sessions_.agent_pids();
	std::map<pid_t, Seen> now;
	std::map<std::uint32_t, Charge> charge;
	for (const Gpu &g : discovery_.gpus) {
		if (!g.nvml)
			continue;
		std::uint64_t outside = 0;
		for (const ProcessUse &p : discovery_.usage->processes(g)) {
			if (ours.count(p.pid))
				continue;
			std::optional<std::uint64_t> job = job_of(p.pid, now);
			if (std::uint32_t tenant = job ? tenant_of(*job, g.index) : 0) {
				Charge &c = charge[tenant];
				c.bytes += p.bytes;
				c.pid = c.pid ? c.pid : p.pid;
				c.job = *job;
				c.gpu = g.index;
			} else {
				outside += p.bytes;
			}
		}
		engine_.gpu_set_external(g.index, outside);
	}
	for (const auto &[tenant, bytes] : charged_)
		if (!charge.count(tenant))
			engine_.tenant_unmanaged(tenant, 0);	// gone with its process, or its job
	for (const auto &[tenant, c] : charge) {
		auto it = charged_.find(tenant);
		if (it != charged_.end() && it->second == c.bytes)
			continue;
		engine_.tenant_unmanaged(tenant, c.bytes);
		if (it == charged_.end())	// said when it starts, not every period
			GOS_LOG(log::notice, "job " << c.job << ": its process " << c.pid << " holds GPU " << c.gpu
						   << " memory without the agent (" << c.bytes
						   << " bytes in all); charged to the job as unmanaged memory");
	}
	charged_.clear();
	for (const auto &[tenant, c] : charge)
		charged_[tenant] = c.bytes;
	seen_ = std::move(now);
}

} // namespace gos::gpud
