// What gpuoversubd says of its node: STATUS (the GPUs with the jobs'
// tenants on them) and JOBS (the jobs registered here). One shape each,
// written by the daemon (daemon/gpud/views.cpp) and read by gpuoversubctl;
// fields and meaning: docs/architecture.md, "Schemas". Readers accept a
// missing field as its default and ignore one they do not know, so that a
// gpuoversubctl of another release still reads the reply.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <gpuoversub/abi.h>

namespace gos::status {

// A job's tenant on one GPU.
struct TenantStatus {
	std::uint64_t job = 0;
	// The engine's figures, each under its tenant_stats.def name; in JSON
	// the weight is relative (weight() below) and throttled a boolean.
	gos_tenant_stats engine{};
	bool idle = false;		// deflated by the balloon
	double oversubscribed_s = 0;	// engine.oversub_ns, in seconds

	double weight() const { return engine.weight / 100.0; }	// as the policy writes it
};
void to_json(nlohmann::json &j, const TenantStatus &t);
void from_json(const nlohmann::json &j, TenantStatus &t);

struct GpuStatus {
	std::uint32_t gpu = 0;		// node index
	std::string pci_bus_id;
	int numa_node = -1;
	std::uint64_t memory = 0;	// physical
	bool simulated = false;
	// The engine's (gos_gpu_stats): bytes it manages, resident and in
	// flight, used outside gpuoversub, being evicted, waited for.
	std::uint64_t capacity = 0, used = 0, external = 0, evicting = 0, waiting = 0;
	std::vector<TenantStatus> tenants;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(GpuStatus, gpu, pci_bus_id, numa_node, memory, simulated, capacity, used,
						external, evicting, waiting, tenants)

// STATUS' reply.
struct Status {
	std::string engine;		// "userspace" or "kernel"
	std::string gpu_source;		// "simulated", "CUDA+NVML", "CUDA"
	std::size_t jobs = 0;		// registered
	std::size_t agents = 0;		// connections that said hello
	std::vector<GpuStatus> gpus;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Status, engine, gpu_source, jobs, agents, gpus)

// One element of JOBS' reply, an array.
struct JobStatus {
	std::uint64_t job = 0;
	std::uint32_t uid = 0;
	std::string partition, account, qos;
	std::size_t steps = 0, tasks = 0;	// registered now
	std::vector<std::uint32_t> gpus;	// node indexes, in the job's order
	std::uint64_t resident = 0, host = 0;	// bytes on its GPUs and in host RAM now
	std::int64_t started = 0;		// unix seconds
	bool report_pending = false;		// ended; its report not yet written
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(JobStatus, job, uid, partition, account, qos, steps, tasks, gpus, resident,
						host, started, report_pending)

} // namespace gos::status
