#include "daemon/gpud/daemon.hpp"

#include <algorithm>
#include <stdexcept>

#include "common/proto/requests.hpp"
#include "daemon/gpud/directories.hpp"
#include "common/util/log.hpp"
#include "daemon/gpud/answer.hpp"

namespace gos::gpud {
namespace {

// Longer than Slurm's own MessageTimeout (10 s by default), so that a slow
// slurmctld answers rather than being killed.
constexpr unsigned slurm_facts_deadline_s = 30;

} // namespace

Daemon::Daemon(config::Config cfg, Discovery gpus, EngineBackend engine)
	: cfg_(std::move(cfg)), discovery_(std::move(gpus)), engine_(std::move(engine)),
	  slurm_facts_(cfg_.policy.slurm_weights, slurm_facts_program(slurm_facts_program_path(), slurm_facts_deadline_s),
		       [](const std::string &line) { GOS_LOG(log::warning, line); }),
	  policy_(cfg_, discovery_.gpus, *engine_.control, slurm_facts_),
	  ledger_(cfg_, discovery_.gpus, *engine_.control, policy_, [this](std::uint64_t job) { release_sessions(job); }),
	  reconciler_(cfg_, ledger_, sessions_, node_, slurm_facts_),
	  unresponsive_(cfg_, *engine_.control, ledger_, policy_, sessions_),
	  engine_site_(engine_site(cfg_, engine_, sessions_, ledger_, discovery_.gpus)),
	  views_(discovery_, *engine_.control, ledger_, sessions_),
	  jobwide_(cfg_, [](const std::string &line) { GOS_LOG(log::warning, line); }),
	  exporter_(cfg_, discovery_.gpus, *engine_.control, ledger_, engine_site_->serves_allocations(),
		    jobwide_.counts()),
	  outside_(discovery_, sessions_, ledger_, *engine_.control),
	  slurm_(ledger_, reconciler_, discovery_.gpus, jobwide_, slurm_facts_),
	  agent_(cfg_, ledger_, *engine_.control, discovery_.gpus, *engine_site_),
	  query_(cfg_, ledger_, views_, discovery_.gpus),
	  routes_({slurm_, agent_, engine_site_->handlers(), query_})
{
	for (const Gpu &g : discovery_.gpus) {
		int err = engine_.control->gpu_add(g.index, g.memory, std::min(cfg_.start.reserve, g.memory - 1));
		if (err)
			throw std::runtime_error("cannot add GPU " + std::to_string(g.index) + " to the engine: " + errno_text(err));
	}
	ledger_.resume();
	reconciler_.sweep();	// what ended while the daemon was away
	// The facts of the jobs that go on read now, not at the next refresh:
	// a Slurm 22.05 epilog takes its run's start from them (JOBWIDE_PART).
	for (const auto &[id, job] : ledger_.jobs())
		reconciler_.follow(id);
}

SessionId Daemon::open(const Peer &peer, std::function<void(proto::Bytes)> send, std::function<void()> hang_up)
{
	return sessions_.open(peer, std::move(send), std::move(hang_up));
}

void Daemon::close(SessionId id)
{
	if (Session *s = sessions_.find(id); s && s->job)
		if (Job *job = ledger_.find(s->job))
			job->agent_left();
	engine_site_->disconnect(id);
	sessions_.close(id);
}

void Daemon::handle(SessionId id, const proto::Frame &f)
{
	Session *s = sessions_.find(id);
	if (!s)
		return;
	Answer r = routes_.dispatch(*s, f);
	// No reply over its row's bound (for JSON, the frame's) is sent.
	if (const proto::RequestRow *row = proto::request_row(f.hdr.type); row && r.body.size() > row->reply_max)
		r = {-E2BIG, "the reply would be " + std::to_string(r.body.size()) + " bytes, over the " +
				     std::to_string(row->reply_max) + " this request may return", {}};
	s->send(proto::encode_reply(f.hdr.seq, r.status, r.error, r.body.data(), r.body.size()));
	if (r.hang_up && s->hang_up)
		s->hang_up();
	flush_orders();
}

bool Daemon::is_agent(SessionId id)
{
	Session *s = sessions_.find(id);
	return s && s->job;
}

std::optional<Refusal> Daemon::refusal(SessionId id, std::uint16_t type)
{
	Session *s = sessions_.find(id);
	return s ? routes_.refusal(*s, type) : std::nullopt;
}

// The job ended: its processes are done, and their connections are closed
// (from the loop), so that an ended job holds no descriptor of the daemon's.
void Daemon::release_sessions(std::uint64_t job)
{
	for (SessionId id : sessions_.of_job(job)) {
		engine_site_->disconnect(id);	// returns for whoever was squeezed by this process
		Session *s = sessions_.find(id);
		s->job = 0;
		if (s->hang_up)
			s->hang_up();
	}
	if (Job *j = ledger_.find(job))
		j->agents = 0;
}

void Daemon::flush_orders()
{
	engine_site_->flush();
}

void Daemon::tick()
{
	engine_site_->tick();
}

void Daemon::balloon_tick()
{
	if (policy_.balloon_period(ledger_.jobs()))
		tick();
}

void Daemon::usage_tick()
{
	outside_.measure();
	unresponsive_.sweep();
	flush_orders();
}

void Daemon::persist_tick()
{
	ledger_.persist();
}

void Daemon::export_tick()
{
	exporter_.write();
}

void Daemon::reconcile_tick()
{
	reconciler_.sweep();
}

void Daemon::slurm_tick()
{
	std::uint64_t now = slurm_facts_.generation();
	if (now == slurm_generation_)
		return;
	slurm_generation_ = now;
	reconciler_.take_slurm_names();	// saved by the next checkpoint
	policy_.apply_all(ledger_.jobs());
	tick();
}

std::vector<std::string> Daemon::reload(const config::Config &next)
{
	if (auto problems = directory_problems(next); !problems.empty())
		throw std::runtime_error(problems.front());
	hold_own_directories(next);
	std::vector<std::string> kept;
	for (const auto &key : config::restart_only_changes(cfg_.start, next.start))
		kept.push_back(key + " changes take effect when gpuoversubd restarts");
	cfg_.policy = next.policy;
	slurm_facts_.configure(cfg_.policy.slurm_weights);
	jobwide_.configure(cfg_);
	policy_.apply_all(ledger_.jobs());
	tick();
	return kept;
}

void Daemon::shutdown()
{
	persist_tick();
}

} // namespace gos::gpud
