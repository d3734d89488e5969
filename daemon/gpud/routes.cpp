#include "daemon/gpud/routes.hpp"

#include "common/util/log.hpp"

namespace gos::gpud {
namespace {

template <class Group>
auto to(Group &group, Reply (Group::*method)(Session &, const proto::Frame &))
{
	return [&group, method](Session &s, const proto::Frame &f) { return (group.*method)(s, f); };
}

} // namespace

Routes::Routes(SlurmHandlers &slurm, AgentHandlers &agent, AgentEngine &engine, QueryHandlers &query)
{
	auto engine_call = [&engine](AgentEngine::Call method) -> Handler {
		return [&engine, method](Session &s, const proto::Frame &f) { return engine.call(method, s, f); };
	};
	table_ = {
		{GOS_REQ_STEP_REGISTER, {Caller::root, to(slurm, &SlurmHandlers::step_register)}},
		{GOS_REQ_STEP_END, {Caller::root, to(slurm, &SlurmHandlers::step_end)}},
		{GOS_REQ_JOB_END, {Caller::root, to(slurm, &SlurmHandlers::job_end)}},
		{GOS_REQ_TASK_REGISTER, {Caller::root, to(slurm, &SlurmHandlers::task_register)}},
		{GOS_REQ_HELLO, {Caller::anyone, to(agent, &AgentHandlers::hello)}},
		{GOS_REQ_RANK, {Caller::agent, to(agent, &AgentHandlers::rank)}},
		{GOS_REQ_RANK_REPORT, {Caller::agent, to(agent, &AgentHandlers::rank_report)}},
		{GOS_REQ_ACTIVITY, {Caller::agent, to(agent, &AgentHandlers::activity)}},
		{GOS_REQ_MEMINFO, {Caller::agent, to(agent, &AgentHandlers::meminfo)}},
		{GOS_REQ_STATS, {Caller::agent, to(agent, &AgentHandlers::stats)}},
		{GOS_REQ_ALLOC, {Caller::agent, engine_call(&EngineHandlers::alloc)}},
		{GOS_REQ_FREE, {Caller::agent, engine_call(&EngineHandlers::free_buffer)}},
		{GOS_REQ_SET_PRIORITY, {Caller::agent, engine_call(&EngineHandlers::set_priority)}},
		{GOS_REQ_ORDER_DONE, {Caller::agent, engine_call(&EngineHandlers::order_done)}},
		{GOS_REQ_PLACEMENT, {Caller::agent, engine_call(&EngineHandlers::placement)}},
		{GOS_REQ_STATUS, {Caller::anyone, to(query, &QueryHandlers::status)}},
		{GOS_REQ_JOBS, {Caller::anyone, to(query, &QueryHandlers::jobs)}},
		{GOS_REQ_REPORT, {Caller::anyone, to(query, &QueryHandlers::report)}},
		{GOS_REQ_EXPLAIN, {Caller::anyone, to(query, &QueryHandlers::explain)}},
	};
}

std::optional<std::string> Routes::refusal(const Session &s, std::uint16_t type) const
{
	auto route = table_.find(type);
	if (route == table_.end())
		return "not a request";
	if (route->second.who == Caller::root && s.peer.uid != 0)
		return "registering and ending steps and tasks is for root (the SPANK plugin)";
	if (route->second.who == Caller::agent && !s.job)
		return "say hello first";
	return std::nullopt;
}

Reply Routes::dispatch(Session &s, const proto::Frame &f) const
{
	auto route = table_.find(f.hdr.type);
	if (auto why = refusal(s, f.hdr.type))
		return {route == table_.end() ? -EINVAL : -EPERM, *why, {}};
	try {
		return route->second.run(s, f);
	} catch (const std::exception &e) {
		GOS_LOG(log::error, "request " << f.hdr.type << " from pid " << s.peer.pid << " failed: " << e.what());
		return {-EIO, e.what(), {}};
	}
}

} // namespace gos::gpud
