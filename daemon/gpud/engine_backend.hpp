// Where the engine runs: the engine library inside the daemon, or
// gpuoversub.ko behind /dev/gpuoversub-control (engine: auto|kernel|userspace
// in the policy). The daemon talks to these interfaces only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <sys/types.h>

#include "common/config/config.hpp"
#include "common/kdev/device.hpp"
#include "gos_engine.h"

namespace gos::gpud {

// What the daemon does with every engine: GPUs, tenants and their
// policies, bindings, statistics.
class EngineControl {
public:
	virtual ~EngineControl() = default;
	virtual std::string name() const = 0;
	virtual std::uint64_t chunk_size() const = 0;
	// Tenants outlive the daemon only in the kernel: nonzero there, and
	// different for every load of the module.
	virtual std::uint64_t instance() const = 0;
	// Adding a GPU the engine already has with the same memory is no error.
	virtual int gpu_add(std::uint32_t gpu, std::uint64_t physical, std::uint64_t reserve) = 0;
	virtual int gpu_set_external(std::uint32_t gpu, std::uint64_t bytes) = 0;
	virtual int gpu_stats(std::uint32_t gpu, gos_gpu_stats &out) = 0;
	virtual int tenant_create(std::uint32_t gpu, std::uint32_t weight, std::uint64_t limit, std::uint32_t &id) = 0;
	virtual int tenant_policy(std::uint32_t tenant, std::uint32_t weight, std::uint64_t limit, std::uint64_t min_bytes) = 0;
	// The most buffers the tenant may hold at once (0: no cap); one
	// allocation more fails with -ENOBUFS, in the engine itself.
	virtual int tenant_max_buffers(std::uint32_t tenant, std::uint32_t most) = 0;
	// GPU memory the tenant's processes hold without the agent (NVML): the
	// tenant's own, unevictable.
	virtual int tenant_unmanaged(std::uint32_t tenant, std::uint64_t bytes) = 0;
	virtual int tenant_destroy(std::uint32_t tenant) = 0;
	virtual int tenant_stats(std::uint32_t tenant, gos_tenant_stats &out) = 0;
	virtual int tenant_list(std::vector<std::uint32_t> &out) = 0;	// every tenant's id
	// Which job's tenants (in the job's GPU order) a process and its
	// descendants (pid), or a cgroup v2 (cgroup id), belong to. Only the
	// kernel needs told: the daemon itself asks /proc.
	virtual int bind(pid_t pid, std::uint64_t cgroup, const std::vector<std::uint32_t> &tenants) = 0;
	virtual int unbind(pid_t pid, std::uint64_t cgroup) = 0;
};

// The engine's clients, when they are the daemon's: the agents allocate,
// free and answer orders through the daemon's socket. Only the engine
// library inside the daemon has them; the kernel's clients are the agents'
// own files, and its delayed work runs the ticks.
class ClientCalls {
public:
	virtual ~ClientCalls() = default;
	virtual int client_create(std::uint32_t &id) = 0;
	virtual int client_exit(std::uint32_t client) = 0;
	virtual int alloc(std::uint32_t client, std::uint32_t tenant, std::uint64_t size, std::uint32_t prio,
			  std::uint32_t flags, gos_alloc_result &res) = 0;
	virtual int free(std::uint32_t client, std::uint64_t buffer) = 0;
	virtual int set_priority(std::uint32_t client, std::uint64_t buffer, std::uint64_t offset, std::uint64_t length,
				 std::uint32_t prio) = 0;
	virtual int placement(std::uint32_t client, std::uint64_t buffer, std::uint32_t first, std::uint32_t count,
			      std::uint8_t *states) = 0;
	virtual int read_messages(std::uint32_t client, gos_message *out, std::uint32_t max) = 0;
	virtual int order_done(std::uint32_t client, std::uint64_t order, bool ok) = 0;
	virtual int tick() = 0;
};

struct EngineBackend {
	std::unique_ptr<EngineControl> control;
	std::unique_ptr<ClientCalls> clients;	// null when the engine is the kernel's
};

// The engine settings the policy fixes at start (chunk size, fairness...).
gos_config engine_config(const config::StartSettings &cfg);

// The engine library inside the daemon: control and clients.
EngineBackend userspace_engine(const gos_config &cfg);

// gpuoversub.ko through its device; throws std::runtime_error with the
// reason when the device cannot be used (missing, another ABI).
std::unique_ptr<EngineControl> kernel_control(const std::string &device);

// Picks the backend the policy asks for: engine: auto takes the kernel's
// when its device is there and usable. Throws std::runtime_error with the
// reason when it cannot (engine: kernel without the module, say).
EngineBackend make_engine(const config::Config &cfg, const std::string &device = kdev::control_path);

} // namespace gos::gpud
