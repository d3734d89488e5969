// A job's counters now: those its record keeps (the base) and its tenants'
// live ones in the engine, which a record holds as of its last save.
#pragma once

#include <vector>

#include "daemon/gpud/engine_backend.hpp"
#include "daemon/gpud/jobs.hpp"

namespace gos::gpud {

// The engine's counters of each of the job's GPUs (zeros where it has no tenant).
std::vector<gos_tenant_stats> live_counters(EngineControl &engine, const Job &job);
// A copy of the job with its tenants' live counters, as its record saves them.
Job with_live_counters(EngineControl &engine, const Job &job);
// A copy with the live counters folded into the base, as a report counts them.
Job folded(EngineControl &engine, const Job &job);

} // namespace gos::gpud
