// Slurm's hostlist syntax, without libslurm: the job-wide record names its
// missing nodes as one expression, and the daemon reads a run's
// SLURM_NODELIST, where neither may link libslurm (docs/jobwide.md).
//
// A name ending in digits has a prefix and a number; "n[0001-0004,0007]"
// is n0001 to n0004 and n0007. A range's width is its lower bound's digit
// count, and each name is zero-padded to it, as Slurm does: "n[8-10]" is
// n8, n9, n10, "n[08-10]" n08, n09, n10. Several brackets in one name
// multiply ("n[1-2]x[1-2]": n1x1, n1x2, n2x1, n2x2).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gos {

class HostlistError : public std::invalid_argument {
public:
	using std::invalid_argument::invalid_argument;
};

// At most this many names from one expression: Slurm's own cap (MAX_RANGE),
// so that a hostile string cannot make us allocate without bound.
constexpr std::size_t hostlist_max_names = 65536;
// And no name longer than a DNS name: a long literal repeated 65,536 times
// is as unbounded as a long range.
constexpr std::size_t hostlist_max_name = 255;

// The names of EXPRESSION, in its order (duplicates kept, empty items
// skipped). Throws HostlistError saying what is wrong: an unbalanced
// bracket, a bound that is no number, a reversed range, more than
// max_names names, or a name longer than hostlist_max_name.
std::vector<std::string> expand_hostlist(std::string_view expression, std::size_t max_names = hostlist_max_names);

// An expression that names each of NAMES once, whatever their order or
// repeats: names that share a prefix and a zero-padded width (or are all
// unpadded) make ranges; one expression item per prefix, prefixes sorted.
// Throws HostlistError for a name no expression can hold (empty, or with a
// comma, a bracket or white space).
std::string compress_hostlist(std::vector<std::string> names);

// compress_hostlist cut at MAX_BYTES: the first ranges that fit, whole,
// and how many names the cut left out.
struct CutHostlist {
	std::string text;
	std::size_t left_out = 0;
};
CutHostlist compress_hostlist_within(std::vector<std::string> names, std::size_t max_bytes);

} // namespace gos
