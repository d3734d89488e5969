// What gpuoversubd says of its node: STATUS (the GPUs with the jobs'
// tenants on them), JOBS (the jobs registered here), EXPLAIN (why a job has
// its shares) and REQUESTS (the request table). One shape each, written by
// the daemon (daemon/gpud/views.cpp, explain.cpp, query_handlers.cpp) and
// read by gpuoversubctl;
// fields and meaning: docs/architecture.md, "Schemas". Readers accept a
// missing field as its default and ignore one they do not know, so that a
// gpuoversubctl of another release still reads the reply.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <gpuoversub/abi.h>

#include "common/report/report.hpp"

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
	std::string pci_bus_id;		// a MIG instance's: its parent's
	std::string uuid;		// "GPU-…", "MIG-…"; empty where unknown
	std::string mig_parent;		// a MIG instance's parent GPU, by UUID; empty for a whole GPU
	std::uint32_t gpu_instance = 0;	// a MIG instance's GPU instance id
	std::vector<std::string> mig_devices;	// a MIG instance's compute instances, by UUID: uuid's first
	int numa_node = -1;
	std::uint64_t memory = 0;	// physical
	bool simulated = false;
	// The engine's (gos_gpu_stats): bytes it manages, resident and in
	// flight, used outside gpuoversub, being evicted, waited for.
	std::uint64_t capacity = 0, used = 0, external = 0, evicting = 0, waiting = 0;
	std::vector<TenantStatus> tenants;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(GpuStatus, gpu, pci_bus_id, uuid, mig_parent, gpu_instance, mig_devices,
						numa_node, memory, simulated, capacity, used,
						external, evicting, waiting, tenants)

// STATUS' reply.
struct Status {
	std::string engine;		// "userspace" or "kernel"
	std::string gpu_source;		// "simulated", "CUDA+NVML" (", MIG"), "CUDA"
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
	std::uint64_t cgroup = 0;		// its Slurm cgroup v2's id (the module binds it); 0: none seen
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(JobStatus, job, uid, partition, account, qos, steps, tasks, gpus, resident,
						host, started, report_pending, cgroup)

// EXPLAIN's reply. What the job asked of --gpu-mem-oversub, and the policy
// entries that gave its ceiling and the default of its partition and QOS.
struct OversubChoice {
	std::string asked;		// "on", "2", "40 GiB"
	double ceiling = 0;		// on FACTOR
	std::string ceiling_from;	// the entry: "max_oversub", "max_oversub.partition.gpu"
	std::string fallback;		// what a job here that gives none gets ("default" in JSON)
	std::string fallback_from;	// ("default_from" in JSON)
};
void to_json(nlohmann::json &j, const OversubChoice &o);
void from_json(const nlohmann::json &j, OversubChoice &o);

// The engine's terms for a job's tenant on one GPU, and what its
// water-filling gave it, with why.
struct EngineShare {
	double weight = 0;		// the engine's, relative (after scaling into its range)
	std::uint64_t min_bytes = 0, limit = 0;	// limit 0: none
	std::uint64_t demand = 0, entitlement = 0;
	std::string entitlement_why;
	double level = 0;		// the GPU's water-filling level, bytes per unit of weight
	std::uint64_t resident = 0, host = 0;
	std::uint64_t unmanaged = 0;	// of resident: the job's processes' without the agent (NVML)
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(EngineShare, weight, min_bytes, limit, demand, entitlement,
						entitlement_why, level, resident, host, unmanaged)

// One of the job's GPUs: the weight rule's result and the engine's share,
// one flat object in JSON.
struct GpuShare {
	report::GpuWeight rule;
	EngineShare engine;
};
void to_json(nlohmann::json &j, const GpuShare &g);
void from_json(const nlohmann::json &j, GpuShare &g);

struct Explanation {
	std::uint64_t job = 0;
	std::uint32_t uid = 0;
	std::string partition, account, qos;
	OversubChoice oversub;
	std::vector<GpuShare> gpus;	// in the job's order
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Explanation, job, uid, partition, account, qos, oversub, gpus)

// REQUESTS' reply: the request table (requests.def) as the daemon has it,
// and the values of the settings its costs name.
struct RequestLine {
	unsigned number = 0;
	std::string name, caller;
	std::string request;		// the payload's kind: none, fixed, records
	std::uint64_t request_min_bytes = 0, request_max_bytes = 0;
	std::uint64_t record_bytes = 0;	// records rows only; absent from JSON for the others
	std::string reply;		// none, fixed, json, bytes
	std::uint64_t reply_max_bytes = 0;
	std::string cost;
};
void to_json(nlohmann::json &j, const RequestLine &r);
void from_json(const nlohmann::json &j, RequestLine &r);

struct Requests {
	int wire_version = 0;
	std::uint64_t max_payload_bytes = 0;
	std::vector<RequestLine> requests;
	std::map<std::string, std::uint64_t> caps;	// a setting's name, its value
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Requests, wire_version, max_payload_bytes, requests, caps)

} // namespace gos::status
