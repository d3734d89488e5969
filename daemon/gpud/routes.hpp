// The route table: which handler serves each request type, and who may
// call it (requests.def). The permission is decided here, once, and the
// payload decoded to its row's type, before any handler runs.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "common/proto/requests.hpp"
#include "daemon/gpud/handlers.hpp"
#include "daemon/gpud/answer.hpp"
#include "daemon/gpud/sessions.hpp"

namespace gos::gpud {

// The handlers, by group. engine is null where the agents' engine is the
// kernel's: its rows are then answered with where to make the call.
struct HandlerGroups {
	SlurmHandlers &slurm;
	AgentHandlers &agent;
	EngineHandlers *engine;
	QueryHandlers &query;
};

class Routes {
public:
	explicit Routes(const HandlerGroups &groups) : groups_(groups) {}
	Answer dispatch(Session &s, const proto::Frame &f) const;
	// Why s may not send a frame of this type (its header is enough):
	// -EINVAL for no request, -EPERM for a caller its row refuses.
	std::optional<Refusal> refusal(const Session &s, std::uint16_t type) const;

private:
	HandlerGroups groups_;
};

} // namespace gos::gpud
