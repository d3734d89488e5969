// Memory that processes outside gpuoversub use on each GPU, as NVML sees
// it, taken off what the engine may give the jobs.
#pragma once

#include "daemon/gpud/engine_backend.hpp"
#include "daemon/gpud/gpus.hpp"
#include "daemon/gpud/sessions.hpp"

namespace gos::gpud {

class OutsideUse {
public:
	OutsideUse(const Discovery &discovery, const SessionTable &sessions, EngineControl &engine)
		: discovery_(discovery), sessions_(sessions), engine_(engine)
	{
	}

	// Without NVML there is nothing to measure.
	void measure();

private:
	const Discovery &discovery_;
	const SessionTable &sessions_;
	EngineControl &engine_;
};

} // namespace gos::gpud
