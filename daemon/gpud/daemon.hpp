// The daemon's state and request handling, apart from any event loop: the
// server feeds it frames and timer ticks, and it answers through each
// session's send function.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/config/config.hpp"
#include "daemon/gpud/engine_backend.hpp"
#include "daemon/gpud/gpus.hpp"
#include "daemon/gpud/identity.hpp"
#include "daemon/gpud/jobs.hpp"
#include "common/proto/wire.hpp"

namespace gos::gpud {

struct Session {
	std::uint32_t id = 0;
	Peer peer;
	std::function<void(proto::Bytes)> send;
	// Set by HELLO: the agent's engine client (none when the engine is the
	// kernel's) and its job.
	std::uint32_t client = 0;
	std::uint64_t job = 0;
	RankStats stats;
	std::map<std::uint64_t, std::pair<std::uint32_t, std::uint64_t>> orders;	// id -> (kind, bytes)
};

class Daemon {
public:
	Daemon(config::Config cfg, Discovery gpus, Engine engine);

	void attach(Session &s);
	// The peer is gone (closed, or killed with -9): release its process.
	void detach(Session &s);
	void handle(Session &s, const proto::Frame &f);

	void tick();		// every return interval
	void balloon_tick();	// every balloon period
	void usage_tick();	// memory used on the GPUs outside gpuoversub
	void persist_tick();	// counters to the state directory
	void export_tick();	// Prometheus textfile, if configured
	// Applies a new policy; settings the engine fixes at start are kept
	// and named in the returned warnings.
	std::vector<std::string> reload(const config::Config &next);
	void shutdown();	// persists every job

	const config::Config &config() const { return cfg_; }
	nlohmann::json status_json();
	nlohmann::json jobs_json();

private:
	struct Reply {
		int status = 0;
		std::string error;
		std::string body;	// raw bytes for fixed replies, JSON text otherwise
	};
	using Handler = Reply (Daemon::*)(Session &, const proto::Frame &);

	Reply hello(Session &s, const proto::Frame &f);
	Reply alloc(Session &s, const proto::Frame &f);
	Reply free_buffer(Session &s, const proto::Frame &f);
	Reply set_priority(Session &s, const proto::Frame &f);
	Reply order_done(Session &s, const proto::Frame &f);
	Reply activity(Session &s, const proto::Frame &f);
	Reply placement(Session &s, const proto::Frame &f);
	Reply meminfo(Session &s, const proto::Frame &f);
	Reply stats(Session &s, const proto::Frame &f);
	Reply rank(Session &s, const proto::Frame &f);
	Reply rank_report(Session &s, const proto::Frame &f);
	Reply status(Session &s, const proto::Frame &f);
	Reply jobs(Session &s, const proto::Frame &f);
	Reply report(Session &s, const proto::Frame &f);
	Reply step_register(Session &s, const proto::Frame &f);
	Reply step_end(Session &s, const proto::Frame &f);
	Reply job_end(Session &s, const proto::Frame &f);
	Reply task_register(Session &s, const proto::Frame &f);

	std::optional<std::uint64_t> job_of_pid(pid_t pid) const;
	std::map<std::uint64_t, Job>::iterator find_step(std::uint64_t job, std::uint32_t step);
	static Reply no_step(std::uint64_t job, std::uint32_t step);
	void ensure_tenants(Job &job);
	void adopt_tenants(Job &job);
	int bind_job(const Job &job);
	void unbind_job(const Job &job);
	void retire_tenant(std::uint32_t tenant);
	void sweep_unowned_tenants();
	void apply_policy(std::uint32_t node_gpu);
	bool finish_job(Job &job);
	std::vector<gos_tenant_stats> live_stats(const Job &job);
	Job snapshot(const Job &job);	// a copy with the tenants' live counters and the sessions' figures
	Job folded(const Job &job);	// a snapshot with live counters folded into the base
	void save(const Job &job);
	void flush_orders();
	std::uint64_t capacity(std::uint32_t node_gpu) const;

	config::Config cfg_;
	Discovery discovery_;
	std::unique_ptr<EngineControl> engine_;
	std::unique_ptr<ClientEngine> clients_;	// null when the engine is the kernel's
	JobStore store_;
	std::map<std::uint64_t, Job> jobs_;
	std::map<std::uint64_t, std::string> saved_;	// last record written per job
	std::map<std::uint32_t, std::pair<std::uint64_t, std::uint32_t>> tenant_owner_;	// tenant -> (job, view index)
	std::map<std::uint32_t, Session *> sessions_;
	std::map<std::uint32_t, Session *> by_client_;
	std::set<std::uint32_t> retiring_;	// tenants of ended jobs the kernel could not remove yet
};

} // namespace gos::gpud
