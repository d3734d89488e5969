// A run's job-wide record: segment version 3 of AdminComment, written once
// per run by its writer into the run's accounting record (docs/jobwide.md,
// "The record: segment version 3"). Unlike version 2 it holds no node's
// part: totals, each figure's spread over the nodes, the top evicters, how
// the nodes' parts ended, and the missing nodes as a hostlist, so that it
// stays within 16 KiB whatever the job's node count:
//   gpuoversub={"ended":{"completed":1017,..},"file":"job-123.run-1.jobwide.json",
//     "gos":3,"gpus":8152,"late":0,"max":{"oversub_s":..,"p99_us":..},
//     "missing":"n[0007,0100-0103]","missing_more":0,"n":1024,
//     "node":{"evicted":[min,median,max],..},"parts":1019,"run":1,
//     "start":1733140000,"sum":{"evicted":..,..},"top":[["n0311",evicted,peak_dev],..],
//     "writer":"n0001"}
// slurmdbd puts the field into its SQL unescaped, so every string in it is
// made of record_chars only, and the text has no quote to escape.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace gos::report {

// The characters a string of the record may hold; any other byte is
// written as '_'.
constexpr std::string_view record_chars =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:,@/+ -";

// One node's part as the writer received it: node_part's JSON
// (admin_comment.hpp), read; a field of the wrong type throws
// nlohmann::json::exception.
struct NodePart {
	std::string node;
	unsigned run = 0;
	std::vector<std::string> gpus;	// PCI bus ids
	std::uint64_t peak_dev = 0, peak_host = 0, evicted = 0, returned = 0;
	double oversub_s = 0, p99_us = 0;
	std::string end;	// why the daemon ended the job itself; empty when Slurm did
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(NodePart, node, run, gpus, peak_dev, peak_host, evicted, returned,
						oversub_s, p99_us, end)

// What the writer knows of the run whatever its parts say.
struct RunFacts {
	std::uint64_t job = 0;
	unsigned run = 0;	// Slurm's restart count while it ran
	std::int64_t start = 0;	// its start time, seconds since the epoch: the run's key
	std::string writer;	// the node writing
	std::uint64_t nodes = 0;	// SLURM_JOB_NUM_NODES
	std::uint64_t late = 0;	// parts that came after the wait
};

// A figure over the nodes that sent a part; the median is the lower one
// of an even count, a node's own figure.
template <class T>
struct Spread {
	T min = 0, median = 0, max = 0;
	bool operator==(const Spread &) const = default;
};

struct Evicter {
	std::string node;
	std::uint64_t evicted = 0, peak_dev = 0;
	bool operator==(const Evicter &) const = default;
};

struct JobwideRecord {
	int gos = 3;
	unsigned run = 0;
	std::int64_t start = 0;
	std::string writer;
	std::uint64_t n = 0, parts = 0;
	std::string missing;	// a hostlist expression, cut
	std::uint64_t missing_more = 0;	// the missing nodes the cut left out
	std::uint64_t late = 0, gpus = 0;
	std::uint64_t sum_peak_dev = 0, sum_peak_host = 0, sum_evicted = 0, sum_returned = 0;
	double max_oversub_s = 0, max_p99_us = 0;
	Spread<std::uint64_t> node_peak_dev, node_evicted, node_returned;
	Spread<double> node_oversub_s, node_p99_us;
	std::optional<std::vector<Evicter>> top;	// none: dropped to fit; empty: nothing evicted
	std::map<std::string, std::uint64_t> ended;	// end reason: parts
	std::string file;	// the writer's job-wide file, in reports.dir
	// Read only: the fields of the wrong type, as "max.oversub_s", read
	// as their defaults.
	std::vector<std::string> unread;
	bool operator==(const JobwideRecord &) const = default;
};
void to_json(nlohmann::json &j, const JobwideRecord &r);
// Reads a segment of version 3 or later (what a later version adds is
// ignored); a field of the wrong type reads as its default and is named in
// unread. Only a `gos` that is not a number throws nlohmann::json::exception.
void from_json(const nlohmann::json &j, JobwideRecord &r);

struct RecordLimits {
	std::size_t max_bytes = 16384;	// the whole segment, "gpuoversub=" included
	std::size_t missing_bytes = 2048;
	std::size_t top = 8;
	std::size_t reasons = 8;	// distinct end reasons; the rest count as "other"
	std::size_t name_bytes = 64;	// a node name or an end reason is cut there
};

// The record of a run from its facts, the parts received (the first per
// node counts) and the nodes that sent none. Within limits.max_bytes: `top`
// is dropped first, then `missing` cut further. Throws std::length_error
// only for limits no record fits (under about 1 KiB).
JobwideRecord build_jobwide_record(const RunFacts &facts, const std::vector<NodePart> &parts,
				   const std::vector<std::string> &missing, const RecordLimits &limits = {});

// The segment as it goes into AdminComment: "gpuoversub={...}".
std::string jobwide_segment(const JobwideRecord &r);

// Whether slurmdbd may take TEXT as it is: no quote, backslash or control
// character (it does not escape them). A site's text without it gets no write.
bool slurmdbd_safe(std::string_view text);

} // namespace gos::report
