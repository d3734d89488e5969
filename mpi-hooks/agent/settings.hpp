// The agent's settings, read once from the environment (the SPANK plugin
// sets them; gpuoversub(3) lists them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gos::agent {

struct Settings {
	std::string socket = "/run/gpuoversub/gpuoversubd.sock";	// GPUOVERSUB_SOCKET
	bool required = false;			// GPUOVERSUB_REQUIRED=1: no engine, no allocation
	std::uint64_t evictable_min = 1 << 20;	// GPUOVERSUB_EVICTABLE_MIN: smaller stays on the device
	std::vector<std::string> pinned_libs;	// GPUOVERSUB_UNEVICTABLE_LIBS: callers kept on the device
	std::string priority_file;		// GPUOVERSUB_PRIORITY_FILE: tag -> priority
	long long context_bytes = -1;		// GPUOVERSUB_CONTEXT_BYTES; -1 = measure with NVML
	int call_timeout_ms = 10000;		// GPUOVERSUB_TIMEOUT_MS
	bool verbose = false;			// GPUOVERSUB_VERBOSE=1
	bool inline_prefetch = true;		// GPUOVERSUB_ALLOC_PREFETCH=inline|deferred
	bool evictable_pools = true;		// GPUOVERSUB_POOLS=evictable|device
	bool ipc_device = false;		// GPUOVERSUB_IPC=device: no managed memory, so CUDA IPC works
	unsigned evict_workers = 4;		// GPUOVERSUB_EVICT_WORKERS (1-64): threads moving one batch
	std::uint64_t reserve_bytes = 0;	// GPUOVERSUB_RESERVE: device-resident memory kept ready; 0 = off
	std::uint64_t job_id = 0;		// SLURM_JOB_ID
	int rank = -1;				// SLURM_PROCID, OMPI_COMM_WORLD_RANK or PMIX_RANK
	int local_rank = -1;
	unsigned world_size = 0;
	std::vector<std::string> problems;	// malformed values, reported once
};

const Settings &settings();

// Warnings and errors on stderr, prefixed "gpuoversub[pid]: ".
void warn(const std::string &msg);
void debug(const std::string &msg);

} // namespace gos::agent
