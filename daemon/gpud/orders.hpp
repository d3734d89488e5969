// The engine's orders and notices to the agents, when the engine is the
// daemon's own. Each session that said hello is an engine client; flush()
// sends every client the messages the engine has for it and remembers the
// orders (EVICT, RETURN) awaiting an answer; notices (SETTLED, ADVICE) await
// none, so a done order counts its bytes for the agent's rank.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "daemon/gpud/engine_backend.hpp"
#include "daemon/gpud/gpus.hpp"
#include "daemon/gpud/ledger.hpp"
#include "daemon/gpud/sessions.hpp"

namespace gos::gpud {

class OrderRouter {
public:
	OrderRouter(ClientCalls &clients, SessionTable &sessions, JobLedger &ledger, const std::vector<Gpu> &gpus)
		: clients_(clients), sessions_(sessions), ledger_(ledger), gpus_(gpus)
	{
	}

	// At hello: the session's engine client.
	int connect(SessionId id, std::uint32_t &client);
	// The process is gone or its job ended: what it held is freed, and
	// others' evicted data may return.
	void disconnect(SessionId id);
	std::uint32_t client_of(SessionId id) const;	// 0 if none
	// The agent's answer to an order, passed to the engine.
	int done(const Session &s, std::uint64_t order, bool ok);
	// Sends every client the orders the engine has for it.
	void flush();
	void tick();	// the engine's return pass, then its orders

private:
	struct Recipient {
		std::uint32_t id = 0;
		std::map<std::uint64_t, std::pair<std::uint32_t, std::uint64_t>> orders;	// id -> (the engine's gos_msg_kind, bytes)
	};
	void deliver(Session &s, const gos_message &m);

	ClientCalls &clients_;
	SessionTable &sessions_;
	JobLedger &ledger_;
	const std::vector<Gpu> &gpus_;
	std::map<SessionId, Recipient> by_session_;
};

} // namespace gos::gpud
