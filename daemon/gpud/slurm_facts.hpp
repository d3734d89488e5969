// Slurm's fairness facts about a job: its partition's PriorityJobFactor
// (slurmctld), its QOS's Priority (slurmdbd) and, as an option, its
// association's fair-share factor (priority/multifactor in slurmctld).
// Also where each job the daemon holds is in its life (slurmctld), for the
// reconciler.
//
// They are read in the background, every `slurm_weights.refresh`, by the
// program gpuoversub-slurm-facts, and cached: a lookup never waits on
// Slurm. When Slurm cannot be read, the last values read stay, and the
// reason is logged once (and once again when Slurm answers).
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "common/config/config.hpp"
#include "daemon/gpud/weight_rule.hpp"

namespace gos::gpud {

// A job's line: Slurm's name of its state, and whether that state is an
// end (unknown to slurmctld, that is purged, is one).
struct SlurmJobLine {
	bool finished = false;
	std::string state;
	bool operator==(const SlurmJobLine &) const = default;
};

// The names a job is weighed by, as slurmctld holds them; empty for none.
// The job's own environment is never asked: its user sets that.
struct SlurmNames {
	std::string partition, account, qos;
	bool operator==(const SlurmNames &) const = default;
};

// A run of a job, as slurmctld holds it while the run lasts: its restart
// count (the run's number) and its start (the run's key: a requeued job's
// runs each have an accounting record of their own, docs/jobwide.md).
struct SlurmRun {
	std::uint32_t restart_cnt = 0;
	std::int64_t start = 0;
	bool operator==(const SlurmRun &) const = default;
};

// One reading of the facts program's output. Each kind (partitions, qos,
// fairshare, jobs) was read, or is named in `unavailable` with the reason.
struct SlurmReading {
	std::map<std::string, std::uint32_t> partition_factor, qos_priority;
	std::map<std::pair<std::string, std::string>, double> fairshare;	// by (account, user)
	std::map<std::uint64_t, SlurmJobLine> jobs;
	std::map<std::uint64_t, SlurmNames> names;
	std::map<std::uint64_t, SlurmRun> runs;
	std::map<std::uint64_t, std::string> nodes;				// a hostlist expression
	std::map<std::string, std::string> unavailable;				// kind -> reason
	std::vector<std::string> garbled;					// lines not understood
};
SlurmReading parse_slurm_facts(const std::string &text);

// What the cache knows of a job the daemon asked about.
struct SlurmJob {
	enum class Is { unasked, running, finished, unreachable };
	Is is = Is::unasked;
	std::string state;		 // running, finished: Slurm's name of it
	std::int64_t finished_since = 0; // finished: when first read so (time())
	std::string reason;		 // unreachable: why
	std::optional<SlurmNames> names; // running, finished: read with the state
	std::optional<SlurmRun> run;	 // running, finished: once the job started
	std::string nodes;		 // running, finished: its node list, if it holds nodes
};

// What one refresh asks of the facts program.
struct FactsQuery {
	bool fairshare = false;
	std::set<std::uint64_t> jobs;	// whose state to read
};

class SlurmFacts {
public:
	// Reads the facts once: the program's output, or throws
	// std::runtime_error saying why there is none. It should return soon
	// after `stop` is requested.
	using Reader = std::function<std::string(const FactsQuery &query, std::stop_token stop)>;
	using Logger = std::function<void(const std::string &)>;

	SlurmFacts(const config::SlurmWeights &settings, Reader reader, Logger log);
	~SlurmFacts();
	SlurmFacts(const SlurmFacts &) = delete;
	SlurmFacts &operator=(const SlurmFacts &) = delete;

	// The policy was reloaded: the next refresh follows it.
	void configure(const config::SlurmWeights &settings);
	// The cached facts for a job; the switches off in the settings stay
	// unknown, with no reason.
	SlurmPriorities lookup(const std::string &partition, const std::string &qos, const std::string &account,
			       uid_t user) const;
	// The jobs whose state the next refreshes read; the others are
	// forgotten.
	void watch(std::set<std::uint64_t> jobs);
	// A job just registered: watched, and read now rather than at the next
	// refresh, for its names.
	void ask(std::uint64_t job);
	// What the latest refreshes read of a watched job.
	SlurmJob job(std::uint64_t id) const;
	// The run the readings last gave for a job, watched or not since: a
	// node's last step may end long before its epilog (a job's other
	// nodes still run, or slurmctld has yet to find a node failed), and a
	// Slurm 22.05 epilog takes its run from here (JOBWIDE_PART). The
	// newest runs_seen_max jobs' runs are kept.
	std::optional<SlurmRun> run_seen(std::uint64_t id) const;
	// The job's run ended here (JOB_END): no longer seen.
	void forget_run(std::uint64_t id);
	static constexpr std::size_t runs_seen_max = 4096;
	// Changes whenever a cached value does, for the event loop to re-apply
	// the weights.
	std::uint64_t generation() const;
	std::uint64_t readings() const;		// refreshes done, for tests

private:
	struct Kind {
		bool read = false;	// at least once
		std::string failure;	// of the latest refresh; empty if it succeeded
	};
	void run(std::stop_token stop);
	void take(const SlurmReading &r, std::map<std::pair<std::string, uid_t>, double> fairshare);
	void take_jobs(const SlurmReading &r, const std::set<std::uint64_t> &asked);
	void note(Kind &k, const std::string &name, const std::string &why, const char *meanwhile = nullptr);
	std::string why(const Kind &k, bool found, const std::string &what) const;

	Reader reader_;
	Logger log_;
	mutable std::mutex mu_;
	std::condition_variable_any wake_;
	config::SlurmWeights settings_;
	std::map<std::string, std::uint32_t> partition_factor_, qos_priority_;
	std::map<std::pair<std::string, uid_t>, double> fairshare_;	// by (account, uid)
	std::set<std::uint64_t> watched_;
	std::map<std::uint64_t, SlurmJob> jobs_;	// of the latest reading that had them
	std::map<std::uint64_t, SlurmRun> runs_seen_;	// run_seen's, oldest first in seen_order_
	std::deque<std::uint64_t> seen_order_;
	Kind partitions_kind_, qos_kind_, fairshare_kind_, jobs_kind_;
	std::uint64_t generation_ = 0, readings_ = 0;
	bool read_now_ = false;	// reconfigured, or a new job asked about
	std::vector<std::string> garbled_;	// of the latest reading, logged
	std::jthread thread_;	// last: started once the rest is ready
};

// The output of gpuoversub-slurm-facts at PATH run with OPTIONS, killed
// when it outlives DEADLINE_S or STOP is requested; throws
// std::runtime_error saying why there is none (it failed, or was killed).
std::string run_facts_program(const std::string &path, const std::vector<std::string> &options, unsigned deadline_s,
			      std::stop_token stop = {});
// The reader that runs gpuoversub-slurm-facts at `path`, killed when it
// outlives `deadline_s`.
SlurmFacts::Reader slurm_facts_program(std::string path, unsigned deadline_s);
// Where the facts program is installed: ../libexec/gpuoversub beside the
// running program's directory.
std::string slurm_facts_program_path();

} // namespace gos::gpud
