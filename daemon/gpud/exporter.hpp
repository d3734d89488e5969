// The Prometheus textfile for node_exporter's textfile collector, written
// atomically every exporter period when the policy names one. Each metric
// family has its HELP and TYPE; names carry their unit, and counters end
// in _total (gpuoversubd(8) lists them).
#pragma once

#include <ostream>
#include <vector>

#include "common/config/config.hpp"
#include "daemon/gpud/engine_backend.hpp"
#include "daemon/gpud/gpus.hpp"
#include "daemon/gpud/jobwide.hpp"
#include "daemon/gpud/ledger.hpp"

namespace gos::gpud {

class Exporter {
public:
	// The host spill limit holds only where allocations pass through the
	// daemon (its own engine); elsewhere the file says 0, no limit.
	// JOBWIDE: the job-wide channel's counts, read at each write only.
	Exporter(const config::Config &cfg, const std::vector<Gpu> &gpus, EngineControl &engine, JobLedger &ledger,
		 bool enforces_spill_limit, const JobwideCounts &jobwide)
		: cfg_(cfg), gpus_(gpus), engine_(engine), ledger_(ledger), enforces_spill_limit_(enforces_spill_limit),
		  jobwide_(jobwide)
	{
	}

	void write();

private:
	void write_jobwide(std::ostream &m) const;

	const config::Config &cfg_;
	const std::vector<Gpu> &gpus_;
	EngineControl &engine_;
	JobLedger &ledger_;
	bool enforces_spill_limit_;
	const JobwideCounts &jobwide_;
};

} // namespace gos::gpud
