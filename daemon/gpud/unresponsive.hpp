// Jobs whose processes let eviction orders expire: a deaf agent, a stuck
// one, or a job Slurm suspended. The engine already takes what they were
// told to give back (it counts those chunks in host RAM, which the driver
// evicts itself, and gives them nothing more until they answer), so their
// neighbours get their share either way. This watch says so in the log,
// once per job and GPU for each stretch of silence, and applies the
// policy's on_unresponsive once the job has let unresponsive_after orders
// expire while still silent:
//   refuse  its new allocations on that GPU are refused (its limit is held
//           at what it has) until it answers again;
//   kill    its agents' processes are killed, except stopped ones: a
//           suspended job is never killed for being suspended.
#pragma once

#include <cstdint>
#include <map>

#include "common/config/config.hpp"
#include "daemon/gpud/engine_backend.hpp"
#include "daemon/gpud/ledger.hpp"
#include "daemon/gpud/policy.hpp"
#include "daemon/gpud/sessions.hpp"

namespace gos::gpud {

class UnresponsiveWatch {
public:
	UnresponsiveWatch(const config::Config &cfg, EngineControl &engine, JobLedger &ledger, PolicyApplier &policy,
			  SessionTable &sessions)
		: cfg_(cfg), engine_(engine), ledger_(ledger), policy_(policy), sessions_(sessions)
	{
	}

	// Reads each job's tenants once: O(jobs x GPUs), every usage period.
	void sweep();

private:
	void kill_agents(Job &job, std::uint64_t expired);

	const config::Config &cfg_;
	EngineControl &engine_;
	JobLedger &ledger_;
	PolicyApplier &policy_;
	SessionTable &sessions_;
};

} // namespace gos::gpud
