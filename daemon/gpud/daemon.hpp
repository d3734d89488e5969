// The daemon apart from any event loop: the server opens a session per
// connection, feeds it frames and runs the timer ticks; the daemon answers
// through each session's send function.
//
// It wires the parts together, each with its own state: the sessions, the
// job ledger (jobs, their tenants and records), the policy applier, where
// the agents' engine is (engine_site.hpp), the handler groups behind one
// route table, and the views, exporter and NVML usage.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/config/config.hpp"
#include "common/proto/wire.hpp"
#include "daemon/gpud/engine_site.hpp"
#include "daemon/gpud/engine_backend.hpp"
#include "daemon/gpud/exporter.hpp"
#include "daemon/gpud/gpus.hpp"
#include "daemon/gpud/handlers.hpp"
#include "daemon/gpud/jobwide.hpp"
#include "daemon/gpud/ledger.hpp"
#include "daemon/gpud/policy.hpp"
#include "daemon/gpud/reconciler.hpp"
#include "daemon/gpud/routes.hpp"
#include "daemon/gpud/sessions.hpp"
#include "daemon/gpud/slurm_facts.hpp"
#include "daemon/gpud/unresponsive.hpp"
#include "daemon/gpud/usage.hpp"
#include "daemon/gpud/views.hpp"

namespace gos::gpud {

class Daemon {
public:
	Daemon(config::Config cfg, Discovery gpus, EngineBackend engine);
	Daemon(const Daemon &) = delete;
	Daemon &operator=(const Daemon &) = delete;

	// A new connection; the id is the connection's handle until close().
	// send and hang_up must not call back into the daemon.
	SessionId open(const Peer &peer, std::function<void(proto::Bytes)> send, std::function<void()> hang_up = {});
	// The peer is gone (closed, or killed with -9): its process is released.
	void close(SessionId id);
	void handle(SessionId id, const proto::Frame &f);
	// Whether the session said hello: an agent, connected for its job's life.
	bool is_agent(SessionId id);
	// Why the session may not send a frame of this type, from its header
	// alone (before its body is read); nullopt if it may.
	std::optional<Refusal> refusal(SessionId id, std::uint16_t type);

	void tick();		// every return interval
	void balloon_tick();	// every balloon period
	void usage_tick();	// memory used outside gpuoversub; jobs that do not answer
	void persist_tick();	// counters to the state directory
	void export_tick();	// Prometheus textfile, if configured
	void reconcile_tick();	// ends the jobs that are gone
	void slurm_tick();	// weights again when Slurm's facts changed
	// Applies a new policy; settings fixed at start are kept and named in
	// the returned warnings. Throws, keeping the running policy, when the new
	// one names a directory that is not the daemon's alone.
	std::vector<std::string> reload(const config::Config &next);
	void shutdown();	// persists every job

	const config::Config &config() const { return cfg_; }
	nlohmann::json status_json() { return views_.status(); }
	nlohmann::json jobs_json() { return views_.jobs(); }
	std::string summary() const { return views_.summary(); }
	// The job-wide channel's state, for the server's I/O (jobwide_io.hpp).
	Jobwide &jobwide() { return jobwide_; }

private:
	void release_sessions(std::uint64_t job);
	void flush_orders();

	config::Config cfg_;
	Discovery discovery_;
	EngineBackend engine_;
	SessionTable sessions_;
	SlurmFacts slurm_facts_;
	std::uint64_t slurm_generation_ = 0;	// of the facts the weights follow
	PolicyApplier policy_;
	JobLedger ledger_;
	ProcProbe node_;
	Reconciler reconciler_;
	UnresponsiveWatch unresponsive_;
	std::unique_ptr<EngineSite> engine_site_;	// chosen once, by the engine
	Views views_;
	Jobwide jobwide_;	// before the exporter, which reads its counts
	Exporter exporter_;
	OutsideUse outside_;
	SlurmHandlers slurm_;
	AgentHandlers agent_;
	QueryHandlers query_;
	Routes routes_;
};

} // namespace gos::gpud
