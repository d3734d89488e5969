// The route table: which handler serves each request type, and who may
// call it, both from the request table (requests.def). The permission is
// decided here, once, before any handler runs.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "common/proto/requests.hpp"
#include "daemon/gpud/handlers.hpp"
#include "daemon/gpud/reply.hpp"
#include "daemon/gpud/sessions.hpp"

namespace gos::gpud {

class Routes {
public:
	// The agents' engine requests go to where their engine is: served by
	// the daemon's own, or answered with where to make them instead.
	Routes(SlurmHandlers &slurm, AgentHandlers &agent, AgentEngine &engine, QueryHandlers &query);
	Reply dispatch(Session &s, const proto::Frame &f) const;
	// Why s may not send a frame of this type (its header is enough); nullopt if it may.
	std::optional<std::string> refusal(const Session &s, std::uint16_t type) const;

private:
	using Handler = std::function<Reply(Session &, const proto::Frame &)>;
	struct Route {
		proto::Caller who;	// as requests.def says; an owner's request is anyone's here
		Handler run;
	};
	std::map<std::uint16_t, Route> table_;
};

} // namespace gos::gpud
