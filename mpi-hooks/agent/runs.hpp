// How one batch of moves is split among the executor's lanes: moves of
// adjacent ranges of one buffer, in the same direction and to the same
// place, coalesce into one run (one advise and one prefetch instead of one
// per 2 MiB chunk); runs longer than a lane's share of the batch are cut,
// at grain boundaries, so that every lane gets about as many bytes; the
// pieces then go to lanes, largest first to the least loaded. Pure: the
// executor gives buffers as opaque keys.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gos::agent {

struct Span {
	const void *buffer;
	std::uint64_t offset, length;
	bool evict;
	int numa;
};

struct Run {
	const void *buffer;
	std::uint64_t offset, length;
	bool evict;
	int numa;
	std::vector<std::size_t> spans;	// indices of the spans it covers, wholly or in part
	unsigned lane;
};

// Disjoint runs covering every span exactly once, spread over at most
// lanes lanes (>= 1); grain (> 0) is the smallest piece a run is cut to.
std::vector<Run> plan_runs(const std::vector<Span> &spans, unsigned lanes, std::uint64_t grain);

} // namespace gos::agent
