// This node's run ends whose part is not yet where it goes, saved before
// the epilog is answered (issue 50, finding 5): state_dir/
// jobwide-outbox-J-START.json holds the epilog's JOBWIDE_PART, frame and
// all, until the part is taken (the writer's own, into its run's journal)
// or its sending has ended (delivered, or given up). A restarted daemon
// takes each one again as the epilog gave it; one older than the frame's
// credential lives is dropped, and logged.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gos::gpud {

// A JOBWIDE_PART request, its bytes split and checked for form only.
struct RunEnd {
	std::uint64_t job = 0;
	std::int64_t start = 0;
	std::uint32_t run = 0, num_nodes = 0;
	std::string node;	// SLURMD_NODENAME
	std::string nodelist;	// SLURM_NODELIST
	std::string frame;	// as the epilog encoded it; empty: no part here
	bool operator==(const RunEnd &) const = default;
};

std::string pending_path(const std::string &state_dir, std::uint64_t job, std::int64_t start);

// Saves END, taken at SAVED_AT (seconds since the epoch), atomically and
// synced. Throws std::runtime_error naming the path and the reason (a full
// disk): the caller refuses the run end, so that the epilog says so.
void save_pending(const std::string &state_dir, const RunEnd &end, std::int64_t saved_at);

// Forgets the run's saved end; one already gone is no error.
void drop_pending(const std::string &state_dir, std::uint64_t job, std::int64_t start);

// The saved ends, at most MAX, each with its time; a file that does not
// read is named in PROBLEMS and left as it is.
struct SavedEnd {
	RunEnd end;
	std::int64_t saved_at = 0;
};
std::vector<SavedEnd> load_pending(const std::string &state_dir, std::size_t max, std::vector<std::string> &problems);

} // namespace gos::gpud
