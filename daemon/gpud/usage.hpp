// GPU memory that processes without the agent hold on each GPU, as NVML
// sees it: a job's process (a task, a descendant, its cgroup) is charged
// to that job's tenant as unmanaged, unevictable memory, so its own share
// pays for it; anyone else's is taken off what the engine may give the
// jobs.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>

#include "daemon/gpud/engine_backend.hpp"
#include "daemon/gpud/gpus.hpp"
#include "daemon/gpud/ledger.hpp"
#include "daemon/gpud/sessions.hpp"

namespace gos::gpud {

class OutsideUse {
public:
	OutsideUse(const Discovery &discovery, const SessionTable &sessions, JobLedger &ledger, EngineControl &engine)
		: discovery_(discovery), sessions_(sessions), ledger_(ledger), engine_(engine)
	{
	}

	// Without NVML there is nothing to measure.
	void measure();

private:
	// The job of each process seen, by pid and start time: a process is
	// walked up to its job once, not every period (one of no job, again).
	struct Seen {
		std::uint64_t start = 0;
		std::optional<std::uint64_t> job;
	};
	// What one tenant's processes hold without the agent, and who first.
	struct Charge {
		std::uint64_t bytes = 0, job = 0;
		pid_t pid = 0;
		std::uint32_t gpu = 0;
	};
	std::optional<std::uint64_t> job_of(pid_t pid, std::map<pid_t, Seen> &now);
	// Job id's tenant on node GPU gpu, 0 if it has none.
	std::uint32_t tenant_of(std::uint64_t id, std::uint32_t gpu);

	const Discovery &discovery_;
	const SessionTable &sessions_;
	JobLedger &ledger_;
	EngineControl &engine_;
	std::map<pid_t, Seen> seen_;
	std::map<std::uint32_t, std::uint64_t> charged_;	// tenant -> unmanaged bytes set
};

} // namespace gos::gpud
