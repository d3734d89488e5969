// The Prometheus textfile for node_exporter's textfile collector, written
// atomically every exporter period when the policy names one.
#pragma once

#include <vector>

#include "common/config/config.hpp"
#include "daemon/gpud/engine_backend.hpp"
#include "daemon/gpud/gpus.hpp"
#include "daemon/gpud/ledger.hpp"

namespace gos::gpud {

class Exporter {
public:
	Exporter(const config::Config &cfg, const std::vector<Gpu> &gpus, EngineControl &engine, JobLedger &ledger)
		: cfg_(cfg), gpus_(gpus), engine_(engine), ledger_(ledger)
	{
	}

	void write();

private:
	const config::Config &cfg_;
	const std::vector<Gpu> &gpus_;
	EngineControl &engine_;
	JobLedger &ledger_;
};

} // namespace gos::gpud
