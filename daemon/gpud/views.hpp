// What gpuoversubctl shows: the node's GPUs with the jobs' tenants on them
// (status), the jobs registered here (jobs), and why a job has its shares
// (explain).
#pragma once

#include <nlohmann/json.hpp>

#include "common/status/status.hpp"
#include "daemon/gpud/engine_backend.hpp"
#include "daemon/gpud/gpus.hpp"
#include "daemon/gpud/ledger.hpp"
#include "daemon/gpud/sessions.hpp"

namespace gos::gpud {

class Views {
public:
	Views(const Discovery &discovery, EngineControl &engine, JobLedger &ledger, const SessionTable &sessions)
		: discovery_(discovery), engine_(engine), ledger_(ledger), sessions_(sessions)
	{
	}

	status::Status status();
	// What the daemon holds, in a line: systemd's STATUS=.
	std::string summary() const;
	std::vector<status::JobStatus> jobs();
	// A job's weights and entitlements, with why (explain.cpp), from its
	// policy (policy.hpp: weights_of, oversub_choice).
	status::Explanation explain(const Job &job, std::vector<report::GpuWeight> weights, status::OversubChoice oversub);

private:
	const Discovery &discovery_;
	EngineControl &engine_;
	JobLedger &ledger_;
	const SessionTable &sessions_;
};

} // namespace gos::gpud
