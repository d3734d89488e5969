// The daemon's request handlers, grouped by caller. Each serves one row of
// the request table (requests.def), routed by routes.cpp, which decides
// who may call it and decodes its payload once, before it runs: a handler
// gets its request typed and checks only what the type cannot say.
#pragma once

#include <map>
#include <span>
#include <vector>

#include "common/config/config.hpp"
#include "common/proto/wire.hpp"
#include "common/util/rate_limit.hpp"
#include "daemon/gpud/engine_site.hpp"
#include "daemon/gpud/engine_backend.hpp"
#include "daemon/gpud/gpus.hpp"
#include "daemon/gpud/jobwide.hpp"
#include "daemon/gpud/ledger.hpp"
#include "daemon/gpud/orders.hpp"
#include "daemon/gpud/reconciler.hpp"
#include "daemon/gpud/answer.hpp"
#include "daemon/gpud/sessions.hpp"
#include "daemon/gpud/slurm_facts.hpp"
#include "daemon/gpud/views.hpp"

namespace gos::gpud {

// The SPANK plugin's (root's): steps, tasks and the end of a job, each
// checked as a request and decided by the ledger. A new job first has the
// reconciler end the jobs that are gone, so that none of them shrinks its
// share.
class SlurmHandlers {
public:
	SlurmHandlers(JobLedger &ledger, Reconciler &reconciler, const std::vector<Gpu> &gpus, Jobwide &jobwide,
		      SlurmFacts &facts)
		: ledger_(ledger), reconciler_(reconciler), gpus_(gpus), jobwide_(jobwide), facts_(facts)
	{
	}
	Answer step_register(Session &s, const gos_req_step &req);
	Answer step_end(Session &s, const gos_req_step_ref &req);
	Answer task_register(Session &s, const gos_req_task &req);
	Answer job_end(Session &s, const gos_req_job &req);
	Answer jobwide_part(Session &s, const gos_req_jobwide &head, std::span<const __u8> bytes);

private:
	JobLedger &ledger_;
	Reconciler &reconciler_;
	const std::vector<Gpu> &gpus_;
	Jobwide &jobwide_;
	SlurmFacts &facts_;
};

// An agent's, for its own job: who it is, what it does, what it may use.
// Its hello tells it where its engine is (engine_site.hpp).
class AgentHandlers {
public:
	AgentHandlers(const config::Config &cfg, JobLedger &ledger, EngineControl &engine, const std::vector<Gpu> &gpus,
		      EngineSite &engine_site)
		: cfg_(cfg), ledger_(ledger), engine_(engine), gpus_(gpus), engine_site_(engine_site)
	{
	}
	Answer hello(Session &s, const gos_req_hello &req);
	Answer activity(Session &s, const gos_req_activity &req);
	Answer stats(Session &s);
	Answer meminfo(Session &s, const gos_req_meminfo &req);
	Answer rank(Session &s, const gos_req_rank &req);
	Answer rank_report(Session &s, const gos_req_rank_report &head, std::span<const gos_rank_record> records);

private:
	Answer admit(Session &s, const gos_req_hello &req);

	const config::Config &cfg_;
	JobLedger &ledger_;
	EngineControl &engine_;
	const std::vector<Gpu> &gpus_;
	EngineSite &engine_site_;
	// Each uid's refused hellos. Deciding one walks /proc (the process's
	// ancestors, its cgroup), so a uid refused past a burst of 32, then 8 a
	// second, is refused at once, before that walk.
	std::map<uid_t, TokenBucket> refused_hellos_;
};

// An agent's engine calls, made on the daemon only when the engine is the
// daemon's own (in the kernel the agent makes them on /dev/gpuoversub).
class EngineHandlers {
public:
	EngineHandlers(const config::Config &cfg, JobLedger &ledger, ClientCalls &engine, OrderRouter &orders,
		       const std::vector<Gpu> &gpus)
		: cfg_(cfg), ledger_(ledger), engine_(engine), orders_(orders), gpus_(gpus)
	{
	}
	Answer alloc(Session &s, const gos_req_alloc &req);
	Answer free_buffer(Session &s, const gos_req_buffer &req);
	Answer set_priority(Session &s, const gos_req_priority &req);
	Answer order_done(Session &s, const gos_req_order_done &req);
	Answer placement(Session &s, const gos_req_placement &req);

private:
	const config::Config &cfg_;
	JobLedger &ledger_;
	ClientCalls &engine_;
	OrderRouter &orders_;
	const std::vector<Gpu> &gpus_;
};

// Anyone's: the node's status, its jobs, a job's report and explanation
// (its owner's and root's), the request table.
class QueryHandlers {
public:
	QueryHandlers(const config::Config &cfg, JobLedger &ledger, Views &views, const std::vector<Gpu> &gpus)
		: cfg_(cfg), ledger_(ledger), views_(views), gpus_(gpus)
	{
	}
	Answer status(Session &s);
	Answer jobs(Session &s);
	Answer report(Session &s, const gos_req_job &req);
	Answer explain(Session &s, const gos_req_job &req);
	Answer requests(Session &s);

private:
	const config::Config &cfg_;
	JobLedger &ledger_;
	Views &views_;
	const std::vector<Gpu> &gpus_;
};

} // namespace gos::gpud
