#include "runs.hpp"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace gos::agent {
namespace {

auto key(const Span &s) { return std::make_tuple(s.buffer, s.evict, s.numa, s.offset); }

// Runs of spans that touch end to end; overlapping or repeated spans (the
// engine never sends them) start runs of their own.
std::vector<Run> coalesce(const std::vector<Span> &spans)
{
	std::vector<std::size_t> order(spans.size());
	std::iota(order.begin(), order.end(), 0);
	std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key(spans[a]) < key(spans[b]); });
	std::vector<Run> runs;
	for (std::size_t i : order) {
		const Span &s = spans[i];
		if (!runs.empty()) {
			Run &r = runs.back();
			if (r.buffer == s.buffer && r.evict == s.evict && r.numa == s.numa && r.offset + r.length == s.offset) {
				r.length += s.length;
				r.spans.push_back(i);
				continue;
			}
		}
		runs.push_back({s.buffer, s.offset, s.length, s.evict, s.numa, {i}, 0});
	}
	return runs;
}

// r cut into pieces of at most share bytes, each piece naming the spans it
// overlaps.
void cut(const Run &r, std::uint64_t share, const std::vector<Span> &spans, std::vector<Run> &out)
{
	for (std::uint64_t at = r.offset; at < r.offset + r.length; at += share) {
		Run piece{r.buffer, at, std::min(share, r.offset + r.length - at), r.evict, r.numa, {}, 0};
		for (std::size_t i : r.spans)
			if (spans[i].offset < piece.offset + piece.length && piece.offset < spans[i].offset + spans[i].length)
				piece.spans.push_back(i);
		out.push_back(std::move(piece));
	}
}

} // namespace

std::vector<Run> plan_runs(const std::vector<Span> &spans, unsigned lanes, std::uint64_t grain)
{
	std::vector<Run> runs = coalesce(spans);
	std::uint64_t total = 0;
	for (const Run &r : runs)
		total += r.length;
	lanes = std::max(1u, lanes);
	std::uint64_t share = ((total + lanes - 1) / lanes + grain - 1) / grain * grain;
	std::vector<Run> pieces;
	for (const Run &r : runs)
		if (lanes > 1 && share && r.length > share)
			cut(r, share, spans, pieces);
		else
			pieces.push_back(r);
	std::stable_sort(pieces.begin(), pieces.end(), [](const Run &a, const Run &b) { return a.length > b.length; });
	std::vector<std::uint64_t> load(lanes, 0);
	for (Run &p : pieces) {
		p.lane = static_cast<unsigned>(std::min_element(load.begin(), load.end()) - load.begin());
		load[p.lane] += p.length;
	}
	return pieces;
}

} // namespace gos::agent
