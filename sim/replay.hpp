// Replays a trace against the real engine under one policy, acting as every
// tenant's agent, and measures fairness, utilization, movement, decision
// latency and an estimated slowdown per tenant.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gos_engine.h"
#include "sim/trace.hpp"

namespace gos::sim {

inline gos_config engine_defaults()
{
	gos_config cfg;
	gos_config_defaults(&cfg);
	return cfg;
}

struct ReplayOptions {
	double hbm_gbps = 3350;		// device memory bandwidth (H100 SXM)
	double link_gbps = 55;		// host link (PCIe 5 x16, achievable)
	std::uint32_t chunk_size = GOS_CHUNK_DEFAULT;
	double tick_s = 0.05;		// return interval
	double persist_s = 5;		// throttle after this long oversubscribed
	std::uint64_t lend_backoff_ns = engine_defaults().lend_backoff_ns;	// gpuoversub's lending backoff
	std::uint64_t lend_backoff_max_ns = engine_defaults().lend_backoff_max_ns;
	std::uint64_t seed = 1;
	std::uint64_t capacity = 0;	// 0: from the trace
};

struct ReplayPolicy {
	std::string name;
	std::string summary;
	gos_config cfg;
	bool weighted;			// honours tenant weights
};

// fcfs, static, uvm-lru, gpuswap, gprioswap, gpuoversub.
std::vector<ReplayPolicy> policies(const ReplayOptions &opt);
// gpuoversub without its lending backoff: what churn costs without damping.
ReplayPolicy undamped(const ReplayOptions &opt);

struct TenantResult {
	std::string name;
	std::uint32_t weight = 1;
	double slowdown = 1;		// 1.0 = as if all its data stayed in HBM
	std::uint64_t bytes_evicted = 0, bytes_returned = 0, bytes_host_placed = 0;
	std::uint64_t peak_resident = 0, peak_host = 0;
	double oversub_s = 0;
};

struct Timeline {
	std::vector<double> time;
	std::vector<std::vector<std::uint64_t>> resident;	// [sample][tenant]
	std::uint64_t capacity = 0;
};

struct PolicyResult {
	std::string policy;
	double jain = 1;		// of resident/entitlement, while oversubscribed
	double utilization = 1;		// used / min(capacity, demand), time-weighted
	double oversubscribed_s = 0;
	std::uint64_t bytes_moved = 0;
	double alloc_p50_us = 0, alloc_p99_us = 0, alloc_max_us = 0;
	std::size_t allocs = 0;
	std::vector<TenantResult> tenants;
	Timeline timeline;
};

// Called with (events done, events total) while replaying.
using Progress = std::function<void(std::size_t, std::size_t)>;

PolicyResult replay(const Trace &trace, const ReplayPolicy &policy, const ReplayOptions &opt,
		    const Progress &progress = {});

} // namespace gos::sim
