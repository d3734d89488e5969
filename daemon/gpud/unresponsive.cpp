#include "daemon/gpud/unresponsive.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "common/compat/pidfd.hpp"
#include "common/util/log.hpp"
#include "daemon/gpud/identity.hpp"

namespace gos::gpud {

void UnresponsiveWatch::sweep()
{
	for (auto &[id, job] : ledger_.jobs()) {
		std::uint64_t expired = 0;
		std::vector<std::pair<JobGpu *, std::uint64_t>> silent;	// and its demand
		for (JobGpu &g : job.gpus) {
			gos_tenant_stats st{};
			if (!g.tenant || engine_.tenant_stats(g.tenant, st))
				continue;
			expired += g.base.expired_orders + st.expired_orders;
			bool now = st.stalled_clients > 0;
			if (now && !g.unanswered)
				GOS_LOG_LIMITED(job.log_budget, log::warning,
						"job " << id << ": " << st.stalled_clients << " of its processes let an order on GPU "
						       << g.node_gpu << " expire unanswered (" << st.expired_orders
						       << " so far); what they were told to give back counts as in host RAM, and "
							  "they get no GPU memory there until they answer");
			if (!now && g.unanswered) {
				GOS_LOG_LIMITED(job.log_budget, log::notice,
						"job " << id << ": its processes answer again on GPU " << g.node_gpu);
				bool held = g.held_at;
				g.held_at = 0;
				g.acted = false;
				if (held)
					policy_.apply(g.node_gpu, ledger_.jobs());
			}
			g.unanswered = now;
			if (now && !g.acted)
				silent.emplace_back(&g, st.demand);
		}
		if (silent.empty() || expired < cfg_.policy.unresponsive_after)
			continue;
		for (auto &[g, demand] : silent) {
			g->acted = true;
			if (cfg_.policy.on_unresponsive != config::Unresponsive::refuse)
				continue;
			g->held_at = std::max<std::uint64_t>(demand, 1);
			policy_.apply(g->node_gpu, ledger_.jobs());
			GOS_LOG_LIMITED(job.log_budget, log::warning,
					"job " << id << ": " << expired << " orders expired unanswered; its new allocations on GPU "
					       << g->node_gpu << " are refused until it answers (on_unresponsive: refuse)");
		}
		if (cfg_.policy.on_unresponsive == config::Unresponsive::kill)
			kill_agents(job, expired);
	}
}

// A pidfd names one process: the checks made once it is open are of the
// process the signal goes to, whatever happens to the pid meanwhile.
void UnresponsiveWatch::kill_agents(Job &job, std::uint64_t expired)
{
	for (SessionId sid : sessions_.of_job(job.id)) {
		const Session *s = sessions_.find(sid);
		pid_t pid = s ? s->peer.pid : 0;
		int fd = pid > 0 ? compat::pidfd_open(pid) : -1;
		if (fd < 0)
			continue;
		auto ps = proc_stat(pid);
		if (!ps || ps->exited || ledger_.job_of_pid(pid) != job.id) {
			::close(fd);
			continue;
		}
		if (ps->stopped)
			GOS_LOG_LIMITED(job.log_budget, log::notice,
					"job " << job.id << ": pid " << pid
					       << " is stopped (suspended?), so it is not killed (on_unresponsive: kill)");
		else if (compat::pidfd_send_signal(fd, SIGKILL) == 0)
			GOS_LOG_LIMITED(job.log_budget, log::warning,
					"job " << job.id << ": killed pid " << pid << " after " << expired
					       << " orders expired unanswered (on_unresponsive: kill)");
		::close(fd);
	}
}

} // namespace gos::gpud
