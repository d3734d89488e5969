#include "daemon/gpud/agent_engine.hpp"

#include "daemon/gpud/handlers.hpp"
#include "daemon/gpud/orders.hpp"

namespace gos::gpud {
namespace {

class DaemonEngine final : public AgentEngine {
public:
	DaemonEngine(const config::Config &cfg, ClientEngine &clients, SessionTable &sessions, JobLedger &ledger,
		     const std::vector<Gpu> &gpus)
		: orders_(clients, sessions, ledger, gpus), calls_(cfg, ledger, clients, orders_, gpus)
	{
	}
	int connect(SessionId id, std::uint32_t &client) override { return orders_.connect(id, client); }
	std::uint32_t hello_flags() const override { return 0; }
	void disconnect(SessionId id) override { orders_.disconnect(id); }
	void flush() override { orders_.flush(); }
	void tick() override { orders_.tick(); }
	bool serves_allocations() const override { return true; }
	EngineHandlers *handlers() override { return &calls_; }

private:
	OrderRouter orders_;
	EngineHandlers calls_;
};

// The kernel's clients are the agents' own files: closing one frees what
// the process held, and the module's delayed work runs the ticks.
class KernelEngine final : public AgentEngine {
public:
	int connect(SessionId, std::uint32_t &client) override
	{
		client = 0;
		return 0;
	}
	std::uint32_t hello_flags() const override { return GOS_HELLO_FLAG_KERNEL; }
	void disconnect(SessionId) override {}
	void flush() override {}
	void tick() override {}
	bool serves_allocations() const override { return false; }
	EngineHandlers *handlers() override { return nullptr; }
};

} // namespace

std::unique_ptr<AgentEngine> agent_engine(const config::Config &cfg, Engine &engine, SessionTable &sessions,
					  JobLedger &ledger, const std::vector<Gpu> &gpus)
{
	if (!engine.clients)
		return std::make_unique<KernelEngine>();
	return std::make_unique<DaemonEngine>(cfg, *engine.clients, sessions, ledger, gpus);
}

} // namespace gos::gpud
