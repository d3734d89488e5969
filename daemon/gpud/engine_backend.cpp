#include "daemon/gpud/engine_backend.hpp"

#include <unistd.h>

#include <cstring>
#include <fstream>
#include <optional>
#include <vector>
#include <stdexcept>

#include "common/util/log.hpp"

namespace gos::gpud {
namespace {

// The engine library inside the daemon, shared by its control and its
// clients: whichever goes last destroys it.
using EngineHandle = std::shared_ptr<gos_engine>;

class UserspaceControl final : public EngineControl {
public:
	UserspaceControl(EngineHandle eng, std::uint64_t chunk_size) : eng_(std::move(eng)), chunk_size_(chunk_size) {}

	std::string name() const override { return "userspace"; }
	std::uint64_t chunk_size() const override { return chunk_size_; }
	std::uint64_t instance() const override { return 0; }
	int gpu_add(std::uint32_t g, std::uint64_t p, std::uint64_t r) override { return gos_gpu_add(e(), g, p, r); }
	int gpu_set_external(std::uint32_t g, std::uint64_t b) override { return gos_gpu_set_external(e(), g, b); }
	int gpu_stats(std::uint32_t g, gos_gpu_stats &o) override { return gos_gpu_get_stats(e(), g, &o); }
	int tenant_create(std::uint32_t g, std::uint32_t w, std::uint64_t l, std::uint32_t &id) override
	{
		return gos_tenant_create(e(), g, w, l, &id);
	}
	int tenant_policy(std::uint32_t t, std::uint32_t w, std::uint64_t l, std::uint64_t min) override
	{
		int err = gos_tenant_set_policy(e(), t, w, l);
		return err ? err : gos_tenant_set_min(e(), t, min);
	}
	int tenant_max_buffers(std::uint32_t t, std::uint32_t most) override
	{
		return gos_tenant_set_max_buffers(e(), t, most);
	}
	int tenant_unmanaged(std::uint32_t t, std::uint64_t b) override { return gos_tenant_set_unmanaged(e(), t, b); }
	int tenant_destroy(std::uint32_t t) override { return gos_tenant_destroy(e(), t); }
	int tenant_stats(std::uint32_t t, gos_tenant_stats &o) override { return gos_tenant_get_stats(e(), t, &o); }
	int tenant_list(std::vector<std::uint32_t> &out) override
	{
		out.resize(static_cast<std::size_t>(gos_tenant_list(e(), nullptr, 0)));
		out.resize(static_cast<std::size_t>(
			gos_tenant_list(e(), out.data(), static_cast<std::uint32_t>(out.size()))));
		return 0;
	}
	// The daemon finds a process's job in /proc itself.
	int bind(pid_t, std::uint64_t, const std::vector<std::uint32_t> &) override { return 0; }
	int unbind(pid_t, std::uint64_t) override { return 0; }

private:
	gos_engine *e() const { return eng_.get(); }
	EngineHandle eng_;
	std::uint64_t chunk_size_;
};

class UserspaceClients final : public ClientCalls {
public:
	explicit UserspaceClients(EngineHandle eng) : eng_(std::move(eng)) {}

	int client_create(std::uint32_t &id) override { return gos_client_create(e(), &id); }
	int client_exit(std::uint32_t c) override { return gos_client_exit(e(), c); }
	int alloc(std::uint32_t c, std::uint32_t t, std::uint64_t s, std::uint32_t p, std::uint32_t f,
		  gos_alloc_result &r) override
	{
		return gos_alloc(e(), c, t, s, p, f, &r);
	}
	int free(std::uint32_t c, std::uint64_t b) override { return gos_free(e(), c, b); }
	int set_priority(std::uint32_t c, std::uint64_t b, std::uint64_t o, std::uint64_t l, std::uint32_t p) override
	{
		return gos_set_priority(e(), c, b, o, l, p);
	}
	int placement(std::uint32_t c, std::uint64_t b, std::uint32_t first, std::uint32_t count,
		      std::uint8_t *states) override
	{
		return gos_buffer_placement(e(), c, b, first, count, states);
	}
	int read_messages(std::uint32_t c, gos_message *out, std::uint32_t max) override
	{
		return gos_read_messages(e(), c, out, max);
	}
	int order_done(std::uint32_t c, std::uint64_t o, bool ok) override
	{
		return ok ? gos_order_ack(e(), c, o) : gos_order_fail(e(), c, o);
	}
	int tick() override { return gos_tick(e()); }

private:
	gos_engine *e() const { return eng_.get(); }
	EngineHandle eng_;
};

// A parameter of the loaded module, as sysfs shows it.
std::optional<std::uint64_t> module_parameter(const std::string &name)
{
	std::ifstream in("/sys/module/gpuoversub/parameters/" + name);
	std::uint64_t v = 0;
	if (in >> v)
		return v;
	return std::nullopt;
}

// In kernel mode the module's parameters decide what these policy settings
// would: say so, once, rather than let an admin believe the file.
void warn_ignored_settings(const config::Config &cfg, const EngineControl &engine)
{
	std::vector<std::string> ignored;
	if (engine.chunk_size() != cfg.start.chunk_size)
		ignored.push_back(std::string(config::start_key::chunk_size) + " (the module's: " +
				  std::to_string(engine.chunk_size()) + " bytes)");
	if (auto ms = module_parameter("return_interval_ms"); ms && *ms * 1'000'000 != cfg.policy.return_interval_ns)
		ignored.push_back("return_interval (the module's: " + std::to_string(*ms) + " ms)");
	if (auto ms = module_parameter("order_timeout_ms"); ms && *ms * 1'000'000 != cfg.start.order_timeout_ns)
		ignored.push_back(std::string(config::start_key::order_timeout_ns) + " (the module's: " + std::to_string(*ms) + " ms)");
	if (auto ms = module_parameter("lend_backoff_ms"); ms && *ms * 1'000'000 != cfg.start.lend_backoff_ns)
		ignored.push_back(std::string(config::start_key::lend_backoff_ns) + " (the module's: " + std::to_string(*ms) + " ms)");
	if (auto ms = module_parameter("lend_backoff_max_ms"); ms && *ms * 1'000'000 != cfg.start.lend_backoff_max_ns)
		ignored.push_back(std::string(config::start_key::lend_backoff_max_ns) + " (the module's: " + std::to_string(*ms) + " ms)");
	if (auto r = module_parameter("select_random"); r && (*r != 0) != cfg.start.random_chunks)
		ignored.push_back(std::string(config::start_key::random_chunks) + " (the module's: " + (*r ? "random" : "priority") + ")");
	if (cfg.start.fairness != config::Fairness::weighted)
		ignored.push_back(std::string(config::start_key::fairness) + " (the module's: weighted)");
	if (cfg.policy.host_spill_limit)
		ignored.push_back("host_spill_limit (allocations go to the module, not through the daemon)");
	for (const auto &what : ignored)
		GOS_LOG(log::warning, "engine: kernel: the policy's " << what << " does not apply; the module's parameters "
							     "decide (gpuoversub(4))");
}

} // namespace

gos_config engine_config(const config::StartSettings &cfg)
{
	gos_config ec;
	gos_config_defaults(&ec);
	ec.chunk_size = static_cast<std::uint32_t>(cfg.chunk_size);
	switch (cfg.fairness) {
	case config::Fairness::weighted: ec.fairness = GOS_FAIR_WEIGHTED; break;
	case config::Fairness::fcfs: ec.fairness = GOS_FAIR_FCFS; break;
	case config::Fairness::static_: ec.fairness = GOS_FAIR_STATIC; break;
	}
	ec.select = cfg.random_chunks ? GOS_SELECT_RANDOM : GOS_SELECT_PRIORITY;
	ec.order_timeout_ns = cfg.order_timeout_ns;
	ec.throttle_persist_ns = cfg.advice_persist_ns;
	ec.return_batch_bytes = cfg.return_batch;
	ec.lend_backoff_ns = cfg.lend_backoff_ns;
	ec.lend_backoff_max_ns = cfg.lend_backoff_max_ns;
	return ec;
}

EngineBackend userspace_engine(const gos_config &cfg)
{
	gos_engine *eng = nullptr;
	if (int err = gos_engine_create(&cfg, &eng))
		throw std::runtime_error(std::string("cannot start the engine: ") + std::strerror(-err));
	EngineHandle shared(eng, gos_engine_destroy);
	return {std::make_unique<UserspaceControl>(shared, cfg.chunk_size), std::make_unique<UserspaceClients>(shared)};
}

EngineBackend make_engine(const config::Config &cfg, const std::string &device)
{
	if (cfg.start.engine == config::EngineMode::userspace)
		return userspace_engine(engine_config(cfg.start));
	std::unique_ptr<EngineControl> engine;
	if (cfg.start.engine == config::EngineMode::kernel) {
		engine = kernel_control(device);
	} else if (::access(device.c_str(), F_OK) != 0) {
		// Modules before kernel ABI 6 had one node, and no control node.
		if (::access(kdev::default_path, F_OK) == 0)
			GOS_LOG(log::warning, "engine: auto: " << kdev::default_path << " is there but not " << device
							<< ": an older gpuoversub.ko is loaded (modprobe -r gpuoversub && "
							   "modprobe gpuoversub loads this release's); hosting the engine "
							   "in the daemon instead");
		return userspace_engine(engine_config(cfg.start));
	} else {
		try {
			engine = kernel_control(device);
		} catch (const std::exception &e) {
			GOS_LOG(log::warning, "engine: auto: " << e.what() << "; hosting the engine in the daemon instead");
			return userspace_engine(engine_config(cfg.start));
		}
	}
	warn_ignored_settings(cfg, *engine);
	return {std::move(engine), nullptr};
}

} // namespace gos::gpud
