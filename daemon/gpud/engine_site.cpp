#include "daemon/gpud/engine_site.hpp"

#include "daemon/gpud/handlers.hpp"
#include "daemon/gpud/orders.hpp"

namespace gos::gpud {
namespace {

class DaemonSite final : public EngineSite {
public:
	DaemonSite(const config::Config &cfg, ClientCalls &clients, SessionTable &sessions, JobLedger &ledger,
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
class KernelSite final : public EngineSite {
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

std::unique_ptr<EngineSite> engine_site(const config::Config &cfg, EngineBackend &engine, SessionTable &sessions,
					  JobLedger &ledger, const std::vector<Gpu> &gpus)
{
	if (!engine.clients)
		return std::make_unique<KernelSite>();
	return std::make_unique<DaemonSite>(cfg, *engine.clients, sessions, ledger, gpus);
}

} // namespace gos::gpud
