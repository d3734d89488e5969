// Where the agents' engine is, chosen once at start from the engine the
// daemon has. The daemon's own: each agent that says hello is its engine
// client over the socket, the daemon serves its engine calls and routes
// the engine's orders to it. The kernel's (gpuoversub.ko): the agents make
// their engine calls on /dev/gpuoversub and its delayed work sends the
// orders, so the daemon only tells them so.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/config/config.hpp"
#include "daemon/gpud/engine_backend.hpp"
#include "daemon/gpud/gpus.hpp"
#include "daemon/gpud/ledger.hpp"
#include "daemon/gpud/sessions.hpp"

namespace gos::gpud {

class EngineHandlers;

class EngineSite {
public:
	virtual ~EngineSite() = default;

	// At hello: the session's engine client (0 when the agent's engine is
	// the kernel's), or an errno.
	virtual int connect(SessionId id, std::uint32_t &client) = 0;
	// The hello reply's flags that tell the agent where its engine is.
	virtual std::uint32_t hello_flags() const = 0;
	// The process is gone or its job ended: what it held is freed, and
	// others' evicted data may return.
	virtual void disconnect(SessionId id) = 0;
	virtual void flush() = 0;	// the engine's orders, sent to their agents
	virtual void tick() = 0;	// the engine's return pass, then its orders
	// Whether the engine's host memory is the daemon's to limit
	// (host_spill_limit is enforced where the daemon serves the allocations).
	virtual bool serves_allocations() const = 0;
	// What serves the agents' engine requests here: the daemon's engine's
	// handlers, or none when they make them on /dev/gpuoversub (routes.cpp
	// then answers them with where).
	virtual EngineHandlers *handlers() = 0;
};

std::unique_ptr<EngineSite> engine_site(const config::Config &cfg, EngineBackend &engine, SessionTable &sessions,
					  JobLedger &ledger, const std::vector<Gpu> &gpus);

} // namespace gos::gpud
