#include "daemon/gpud/tenants.hpp"

#include <vector>

#include "common/util/log.hpp"
#include "common/util/units.hpp"
#include "daemon/gpud/answer.hpp"

namespace gos::gpud {

std::optional<Refusal> TenantBook::ensure(Job &job)
{
	for (std::uint32_t i = 0; i < job.gpus.size(); i++) {
		JobGpu &g = job.gpus[i];
		if (g.tenant)
			continue;
		if (int err = engine_.tenant_create(g.node_gpu, 100, 0, g.tenant))
			return Refusal{err < 0 ? err : -err, "engine: cannot add job " + std::to_string(job.id) + " on GPU " +
							    std::to_string(g.node_gpu) + ": " + errno_text(err)};
		owner_[g.tenant] = {job.id, i};
		job.engine_instance = engine_.instance();
	}
	return std::nullopt;
}

// The job's tenants are still the engine's if the engine outlived the
// daemon (the kernel's, same module load) and each is on its GPU.
// Otherwise their last saved counters join the base, and ensure makes new
// ones.
std::vector<bool> TenantBook::adopt(Job &job)
{
	std::vector<bool> kept(job.gpus.size(), false);
	bool same_engine = engine_.instance() && job.engine_instance == engine_.instance();
	for (std::uint32_t i = 0; i < job.gpus.size(); i++) {
		JobGpu &g = job.gpus[i];
		gos_tenant_stats st{};
		if (g.tenant && same_engine && !owner_.count(g.tenant) && engine_.tenant_stats(g.tenant, st) == 0 &&
		    st.gpu == g.node_gpu) {
			owner_[g.tenant] = {job.id, i};
			GOS_LOG(log::info, "state: job " << job.id << " keeps tenant " << g.tenant << " on GPU " << g.node_gpu
							 << " with " << format_bytes(st.demand) << " allocated");
			kept[i] = true;
			continue;
		}
		g.base.add(g.live);
		g.live = {};
		g.tenant = 0;
	}
	return kept;
}

// In the kernel: ones made just before a crash saved their record, or left
// retiring by a daemon that stopped. A fresh userspace engine has none.
void TenantBook::sweep_unowned()
{
	std::vector<std::uint32_t> all;
	if (int err = engine_.tenant_list(all)) {
		GOS_LOG(log::warning, "engine: cannot list tenants: " << errno_text(err));
		return;
	}
	for (std::uint32_t t : all)
		if (!owner_.count(t)) {
			GOS_LOG(log::notice, "engine: tenant " << t << " belongs to no job record; removing it");
			retire(t);
		}
}

// In the kernel a process that outlived its job may still hold buffers in
// the tenant; it then stays, at the lowest weight, until retry_retiring
// finds it empty.
void TenantBook::retire(std::uint32_t tenant)
{
	owner_.erase(tenant);
	if (engine_.tenant_destroy(tenant) == -EBUSY) {
		engine_.tenant_policy(tenant, 1, 0, 0);
		if (retiring_.insert(tenant).second)
			GOS_LOG(log::warning, "engine: tenant " << tenant << " still holds memory of a process that outlived "
								  "its job; it is removed once that memory is freed");
	} else {
		retiring_.erase(tenant);
	}
}

void TenantBook::retry_retiring()
{
	for (std::uint32_t t : std::set<std::uint32_t>(retiring_))
		retire(t);
}

// Its cgroup and its task pids, each to all of its tenants.
int TenantBook::bind(const Job &job)
{
	std::vector<std::uint32_t> tenants;
	for (const auto &g : job.gpus)
		tenants.push_back(g.tenant);
	if (tenants.empty() || job.ended)
		return 0;
	int first = 0;
	auto bind_one = [&](pid_t pid, std::uint64_t cgroup) {
		int err = engine_.bind(pid, cgroup, tenants);
		if (err && !first)
			first = err;
		if (err)
			GOS_LOG(log::error, "engine: cannot bind " << (pid ? "task " + std::to_string(pid) : "cgroup " + std::to_string(cgroup))
							   << " to job " << job.id << ": " << errno_text(err));
	};
	if (job.cgroup)
		bind_one(0, job.cgroup);
	for (const auto &[pid, task] : job.tasks)
		bind_one(pid, 0);
	return first;
}

void TenantBook::unbind(const Job &job)
{
	if (job.cgroup)
		engine_.unbind(0, job.cgroup);
	for (const auto &[pid, task] : job.tasks)
		engine_.unbind(pid, 0);
}

std::optional<TenantBook::Owner> TenantBook::owner(std::uint32_t tenant) const
{
	auto it = owner_.find(tenant);
	if (it == owner_.end())
		return std::nullopt;
	return it->second;
}

std::uint64_t TenantBook::host_bytes()
{
	std::uint64_t host = 0;
	for (const auto &[tenant, owner] : owner_) {
		gos_tenant_stats st{};
		if (!engine_.tenant_stats(tenant, st))
			host += st.host;
	}
	return host;
}

} // namespace gos::gpud
