// The node policy, /etc/gpuoversub/gpuoversub.yaml. Every key is checked;
// an error names the file, line and column, and nothing is guessed.
// The keys are documented in gpuoversub.yaml(5).
//
// A policy is two parts: the settings fixed when the daemon starts (where
// it listens and keeps state, the engine and what the engine is built
// with) and the policy proper, which a reload (SIGHUP) replaces.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/config/oversub.hpp"

namespace gos::config {

class ConfigError : public std::runtime_error {
public:
	using std::runtime_error::runtime_error;
};

// The engine's fairness family: weighted (with its variant equal), fcfs, static.
enum class Fairness { weighted, fcfs, static_ };
enum class EngineMode { auto_, kernel, userspace };
enum class Ceiling { clamp, refuse };

struct SimulatedGpu {
	std::uint64_t memory = 0;
	int numa_node = -1;
	std::string pci_bus_id;
	bool nvml = false;	// per-process usage from NVML at pci_bus_id (the fake driver's, in tests)
	std::string uuid;	// its name, as a MIG instance's or a whole GPU's; none by default
	bool operator==(const SimulatedGpu &) const = default;
};

// Weights or minimum shares keyed by partition, account and QOS name.
struct PerTenantTable {
	std::map<std::string, double> partition, account, qos;
};

// Which of Slurm's fairness facts weigh a job (slurm_weights, the
// combination rule of gpuoversub.yaml(5)), and how often they are read.
struct SlurmWeights {
	bool shards = true;			// shards held / shards of the GPU
	bool partition_factor = true;		// the partition's PriorityJobFactor
	bool qos_priority = true;		// the QOS's Priority
	bool fairshare = false;			// the association's fair-share factor
	std::uint64_t refresh_ns = 60'000'000'000ULL;
};

// Who writes a job-wide record into Slurm's accounting (jobwide.record_helper,
// docs/jobwide.md "The root helper"): the root helper behind its socket, the
// program run by the daemon itself (a daemon that is root), or the daemon's
// own user made a slurmdbd Operator.
enum class RecordHelper { socket, direct, none };

// The job-wide channel's policy (jobwide: in gpuoversub.yaml(5), replaced on
// reload); where it listens is in StartSettings.
struct Jobwide {
	std::uint64_t wait_ns = 60'000'000'000ULL;		// a writer waits this long for the parts
	std::uint64_t failover_after_ns = 60'000'000'000ULL;	// then senders also send to the successor
	std::uint64_t send_for_ns = 600'000'000'000ULL;	// a sender gives up after this
	std::uint64_t keep_ns = 3'600'000'000'000ULL;		// a written run kept for late parts; 0 = not kept
	std::uint64_t max_nodes = 16384;			// parts one run holds at most
	RecordHelper record_helper = RecordHelper::socket;
	bool operator==(const Jobwide &) const = default;
	// How long a node's sealed part is good for: send_for and a minute, at
	// most munged's own default cap (--max-ttl, an hour). The epilog seals
	// with it; a restarted daemon drops a saved part older than it.
	std::int64_t part_ttl_s() const
	{
		return static_cast<std::int64_t>(std::min<std::uint64_t>(send_for_ns / 1'000'000'000ULL + 60, 3600));
	}
};

// Fixed at start: a reload keeps the running values and names those it
// could not apply (restart_only_changes). Each one's key is in
// start_settings.def.
struct StartSettings {
	std::string socket = "/run/gpuoversub/gpuoversubd.sock";
	std::string state_dir = "/var/lib/gpuoversub";
	EngineMode engine = EngineMode::auto_;
	Fairness fairness = Fairness::weighted;
	std::uint64_t chunk_size = 32ULL << 20;	// the shipped policy's; 2M is slow on current GPUs
	bool random_chunks = false;		// GPUswap random instead of priority
	std::uint64_t order_timeout_ns = 10'000'000'000ULL;
	std::uint64_t advice_persist_ns = 10'000'000'000ULL;	// 0 = no throttle
	std::uint64_t return_batch = 256ULL << 20;
	// Lending backoff (gpuoversub-engine(3)): 0 = lend again at once.
	std::uint64_t lend_backoff_ns = 1'000'000'000ULL;
	std::uint64_t lend_backoff_max_ns = 30'000'000'000ULL;
	std::uint64_t reserve = 512ULL << 20;	// per GPU, kept from the engine
	std::vector<SimulatedGpu> simulated_gpus;
	// The job-wide channel's door (jobwide: in the file): its TCP port, the
	// numeric address it listens on (empty = all), and munged's socket.
	std::uint16_t jobwide_port = 6828;
	std::string jobwide_listen;
	std::string jobwide_munge_socket = "/run/munge/munge.socket.2";
	// Parts leave from, and the door takes only, ports below 1024, which
	// no user can bind (the daemon needs CAP_NET_BIND_SERVICE).
	bool jobwide_reserved_ports = true;
	// Fixed cadences, not in the policy file.
	std::uint64_t usage_period_ns = 1'000'000'000ULL;	// NVML per-process usage
	std::uint64_t persist_period_ns = 1'000'000'000ULL;	// counters to state_dir
};

// start_key::member: the policy-file key of StartSettings' member.
namespace start_key {
#define GOS_START_SETTING(member, key) inline constexpr char member[] = key;
#include "common/config/start_settings.def"
} // namespace start_key

// What the daemon does to a job that lets eviction orders expire
// (gpuoversubd(8), "A job that does not answer").
enum class Unresponsive { refuse, kill };

// What a reload replaces.
struct Policy {
	bool equal_weights = false;		// fairness: equal, within the weighted family
	PerTenantTable weights;
	SlurmWeights slurm_weights;
	PerTenantTable min_share;		// fractions of a GPU, 0..1
	Keyed<double> max_oversub{4, {}, {}};		// ceiling on --gpu-mem-oversub=FACTOR
	Keyed<Request> default_oversub;		// a job's value when it gives none: off
	Ceiling over_ceiling = Ceiling::clamp;
	std::uint64_t return_interval_ns = 50'000'000;
	bool balloon = true;
	std::uint64_t balloon_period_ns = 500'000'000;
	double balloon_low = 0.1, balloon_high = 0.5, balloon_idle_weight = 0.25;
	std::uint64_t host_spill_limit = 0;	// bytes across the node; 0 = none
	std::string report_dir = "/var/log/gpuoversub/reports";
	bool report_summary = true;		// also write a .txt summary
	bool report_admin_comment = false;	// for the SPANK epilog
	// reports.dir's files older than this go (0: none by age), then the
	// oldest while the rest are over report_max_bytes (0: no cap).
	std::uint64_t report_keep_ns = 90ULL * 86400 * 1'000'000'000ULL;
	std::uint64_t report_max_bytes = 0;
	std::string exporter_textfile;		// empty = off
	std::uint64_t exporter_period_ns = 15'000'000'000ULL;
	// Connections one user may hold on the public socket besides their jobs'
	// agents; root is not counted.
	std::size_t max_connections_per_uid = 64;
	// Slurm's cgroup/v2 root under the cgroup v2 mount: its job_<id>
	// children, root's, tie processes to jobs.
	std::string slurm_cgroup = "/system.slice/slurmstepd.scope";
	std::uint64_t max_buffers_per_job = 65536;
	// Ranks a job's report lists (RANK and RANK_REPORT): bounds its record,
	// its report and the work of each save.
	std::uint64_t max_ranks_per_job = 1024;
	// Connections that said hello (agents) one job may hold at once: they
	// are not counted in max_connections_per_uid, but are bounded here.
	std::uint64_t max_agents_per_job = 256;
	// Jobs gone without a JOB_END are looked for this often (and at start
	// and before a new job), and are gone only this long after their last
	// registration.
	std::uint64_t reconcile_period_ns = 60'000'000'000ULL;
	std::uint64_t stale_grace_ns = 30'000'000'000ULL;
	// After this many expired orders, while its processes still have not
	// answered, a job meets on_unresponsive.
	std::uint64_t unresponsive_after = 3;
	Unresponsive on_unresponsive = Unresponsive::refuse;
	Jobwide jobwide;
};

struct Config {
	StartSettings start;
	Policy policy;
};

// Limits no real policy comes near, checked before the text is loaded so
// that a hostile or mistaken file is refused fast, with file:line:column.
constexpr std::size_t max_file_bytes = 1 << 20;
constexpr std::size_t max_depth = 32;	// nested mappings and lists
constexpr std::size_t max_nodes = 100000;	// values, mappings, lists, aliases

// Parses YAML text; `name` is used in messages.
Config parse_config(const std::string &text, const std::string &name);
// Reads a regular file (never a directory, FIFO or device) of at most
// max_file_bytes and parses it.
Config load_config(const std::string &path);

// The policy-file keys whose start settings differ between running and
// next: a reload cannot apply them.
std::vector<std::string> restart_only_changes(const StartSettings &running, const StartSettings &next);

} // namespace gos::config
