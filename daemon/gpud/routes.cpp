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
	// Every row of the request table, to its handler by its group.
#define GOS_ROUTE_SLURM(name) to(slurm, &SlurmHandlers::name)
#define GOS_ROUTE_AGENT(name) to(agent, &AgentHandlers::name)
#define GOS_ROUTE_ENGINE(name) engine_call(&EngineHandlers::name)
#define GOS_ROUTE_QUERY(name) to(query, &QueryHandlers::name)
#define GOS_REQUEST(NAME, name, number, handler, caller, ...) \
	table_[GOS_REQ_##NAME] = {proto::Caller::caller, GOS_ROUTE_##handler(name)};
#include <gpuoversub/requests.def>
#undef GOS_REQUEST
#undef GOS_ROUTE_SLURM
#undef GOS_ROUTE_AGENT
#undef GOS_ROUTE_ENGINE
#undef GOS_ROUTE_QUERY
}

std::optional<std::string> Routes::refusal(const Session &s, std::uint16_t type) const
{
	auto route = table_.find(type);
	if (route == table_.end())
		return "not a request";
	if (route->second.who == proto::Caller::root && s.peer.uid != 0)
		return "registering and ending steps and tasks is for root (the SPANK plugin)";
	if (route->second.who == proto::Caller::agent && !s.job)
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
