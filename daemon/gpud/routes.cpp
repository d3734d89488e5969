#include "daemon/gpud/routes.hpp"

#include <cerrno>
#include <cstring>
#include <iterator>
#include <span>
#include <vector>

#include "common/util/log.hpp"

namespace gos::gpud {
namespace {

using Serve = Answer (*)(const HandlerGroups &, Session &, const proto::Frame &);
struct Route {
	std::uint16_t type;
	Serve serve;
};

// The group of a handler's class.
SlurmHandlers *group(const HandlerGroups &g, SlurmHandlers *) { return &g.slurm; }
AgentHandlers *group(const HandlerGroups &g, AgentHandlers *) { return &g.agent; }
EngineHandlers *group(const HandlerGroups &g, EngineHandlers *) { return g.engine; }
QueryHandlers *group(const HandlerGroups &g, QueryHandlers *) { return &g.query; }

template <class Method>
struct member_of;
template <class Class, class R, class... Args>
struct member_of<R (Class::*)(Args...)> {
	using type = Class;
};

// Request Type's payload as its row's type, to Handler. wire.cpp checked the
// payload's size against the row before buffering it: a fixed payload is
// exactly its struct, a records payload its head and 1 to most records.
template <std::uint16_t Type, auto Handler>
Answer serve(const HandlerGroups &g, Session &s, const proto::Frame &f)
{
	using In = typename proto::Request<Type>::In;
	using Group = typename member_of<decltype(Handler)>::type;
	Group *to = group(g, static_cast<Group *>(nullptr));
	if (!to)
		return {-EOPNOTSUPP, "this node's engine is gpuoversub.ko: make this call on /dev/gpuoversub", {}};
	if constexpr (In::kind == proto::Body::none) {
		return (to->*Handler)(s);
	} else if constexpr (In::kind == proto::Body::fixed) {
		typename In::type req;
		std::memcpy(&req, f.payload.data(), sizeof req);
		return (to->*Handler)(s, req);
	} else {
		using Record = typename In::record_type;
		typename In::head_type head;
		std::memcpy(&head, f.payload.data(), sizeof head);
		std::vector<Record> records((f.payload.size() - sizeof head) / sizeof(Record));
		std::memcpy(records.data(), f.payload.data() + sizeof head, records.size() * sizeof(Record));
		return (to->*Handler)(s, head, std::span<const Record>(records));
	}
}

template <std::uint16_t Type, auto Handler>
constexpr Route route()
{
	return {Type, &serve<Type, Handler>};
}

// Every request of requests.def, in its order, to its handler.
constexpr Route routes[] = {
	route<GOS_REQ_HELLO, &AgentHandlers::hello>(),
	route<GOS_REQ_ALLOC, &EngineHandlers::alloc>(),
	route<GOS_REQ_FREE, &EngineHandlers::free_buffer>(),
	route<GOS_REQ_SET_PRIORITY, &EngineHandlers::set_priority>(),
	route<GOS_REQ_ORDER_DONE, &EngineHandlers::order_done>(),
	route<GOS_REQ_ACTIVITY, &AgentHandlers::activity>(),
	route<GOS_REQ_STATS, &AgentHandlers::stats>(),
	route<GOS_REQ_STATUS, &QueryHandlers::status>(),
	route<GOS_REQ_JOBS, &QueryHandlers::jobs>(),
	route<GOS_REQ_REPORT, &QueryHandlers::report>(),
	route<GOS_REQ_STEP_REGISTER, &SlurmHandlers::step_register>(),
	route<GOS_REQ_STEP_END, &SlurmHandlers::step_end>(),
	route<GOS_REQ_TASK_REGISTER, &SlurmHandlers::task_register>(),
	route<GOS_REQ_PLACEMENT, &EngineHandlers::placement>(),
	route<GOS_REQ_MEMINFO, &AgentHandlers::meminfo>(),
	route<GOS_REQ_JOB_END, &SlurmHandlers::job_end>(),
	route<GOS_REQ_RANK, &AgentHandlers::rank>(),
	route<GOS_REQ_RANK_REPORT, &AgentHandlers::rank_report>(),
	route<GOS_REQ_EXPLAIN, &QueryHandlers::explain>(),
	route<GOS_REQ_REQUESTS, &QueryHandlers::requests>(),
	route<GOS_REQ_JOBWIDE_PART, &SlurmHandlers::jobwide_part>(),
};

// requests.def numbers its rows 1, 2, ... (requests.cpp asserts it): the
// table routes each once when its n-th line is request n, which is also
// where dispatch finds it.
constexpr bool routes_each_request_once()
{
	if (std::size(routes) != GOS_REQ_MAX)
		return false;
	for (std::size_t i = 0; i < std::size(routes); i++)
		if (routes[i].type != i + 1)
			return false;
	return true;
}
static_assert(routes_each_request_once(), "routes[] must route every request of requests.def once, in its order");

} // namespace

std::optional<Refusal> Routes::refusal(const Session &s, std::uint16_t type) const
{
	const proto::RequestRow *row = proto::request_row(type);
	if (!row)
		return Refusal{-EINVAL, "not a request"};
	if (row->caller == proto::Caller::root && s.peer.uid != 0)
		return Refusal{-EPERM, "registering and ending steps and tasks is for root (the SPANK plugin)"};
	if (row->caller == proto::Caller::agent && !s.job)
		return Refusal{-EPERM, "say hello first"};
	return std::nullopt;
}

Answer Routes::dispatch(Session &s, const proto::Frame &f) const
{
	if (auto refused = refusal(s, f.hdr.type))
		return answer_of(refused);
	try {
		return routes[f.hdr.type - 1].serve(groups_, s, f);
	} catch (const std::exception &e) {
		GOS_LOG(log::error, "request " << f.hdr.type << " from pid " << s.peer.pid << " failed: " << e.what());
		return {-EIO, e.what(), {}};
	}
}

} // namespace gos::gpud
