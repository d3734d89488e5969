// The jobs' records in the state directory: one JSON record per job,
// written again only when it changed (the ledger saves every second), and
// its MPI ranks in a file of their own, written when they change.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/util/rate_limit.hpp"
#include "daemon/gpud/jobs.hpp"

namespace gos::gpud {

class JobStore {
public:
	explicit JobStore(std::string dir) : dir_(std::move(dir)) {}
	// Reads every record; unreadable ones are reported, set aside and skipped.
	std::map<std::uint64_t, Job> load_all(std::vector<std::string> &problems);
	// Writes the job's record (as now, with its live counters) if it
	// changed since last written, and its MPI ranks first if they are
	// unsaved; each atomically. Returns why it could not, or "", never
	// throws: a full disk must not take the node down.
	std::string save(const Job &now);
	void remove(std::uint64_t job);

private:
	std::string path(std::uint64_t job) const;
	std::string ranks_path(std::uint64_t job) const;
	std::string dir_;
	std::map<std::uint64_t, std::string> written_;	// the last record written, per job
	// A save that fails fails again every second (a full disk): one
	// line a minute, with the count left out.
	RateLimit failures_{std::chrono::minutes(1)};
};

} // namespace gos::gpud
