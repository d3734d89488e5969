// How the order executor splits a batch of moves among its lanes
// (mpi-hooks/agent/runs.hpp): adjacent chunks coalesce, every chunk is moved
// exactly once, and the lanes get even shares.
#define BOOST_TEST_MODULE runs
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <map>

#include "mpi-hooks/agent/runs.hpp"

using gos::agent::Run;
using gos::agent::Span;
using gos::agent::plan_runs;

namespace {

constexpr std::uint64_t chunk = 2 << 20;
const int a = 0, b = 0;	// two buffers, told apart by address

// Every byte of every span covered by exactly one run, and no run byte
// outside the spans; each run names the spans it covers.
void check_exact_cover(const std::vector<Span> &spans, const std::vector<Run> &runs)
{
	std::map<std::pair<const void *, std::uint64_t>, int> covered;	// (buffer, chunk start) -> times
	for (const Run &r : runs) {
		BOOST_TEST(r.length % chunk == 0u);
		for (std::uint64_t at = r.offset; at < r.offset + r.length; at += chunk) {
			covered[{r.buffer, at}]++;
			bool named = std::any_of(r.spans.begin(), r.spans.end(), [&](std::size_t i) {
				return spans[i].buffer == r.buffer && spans[i].offset <= at &&
				       at < spans[i].offset + spans[i].length && spans[i].evict == r.evict;
			});
			BOOST_TEST(named);
		}
	}
	std::size_t chunks = 0;
	for (const Span &s : spans)
		for (std::uint64_t at = s.offset; at < s.offset + s.length; at += chunk, chunks++)
			BOOST_TEST((covered[{s.buffer, at}]) == 1);
	BOOST_TEST(covered.size() == chunks);
}

} // namespace

BOOST_AUTO_TEST_CASE(adjacent_chunks_of_one_buffer_make_one_run_per_stretch)
{
	// Chunks 3, 1, 2 and 7 of a (arriving out of order), 0 of b: three runs.
	std::vector<Span> spans{{&a, 3 * chunk, chunk, true, 0}, {&a, 1 * chunk, chunk, true, 0},
				{&b, 0, chunk, true, 0},	 {&a, 2 * chunk, chunk, true, 0},
				{&a, 7 * chunk, chunk, true, 0}};
	auto runs = plan_runs(spans, 1, chunk);
	BOOST_REQUIRE_EQUAL(runs.size(), 3u);
	std::sort(runs.begin(), runs.end(), [](const Run &x, const Run &y) { return x.length > y.length; });
	BOOST_TEST(runs[0].buffer == &a);
	BOOST_TEST(runs[0].offset == chunk);
	BOOST_TEST(runs[0].length == 3 * chunk);
	BOOST_TEST(runs[0].spans.size() == 3u);
	for (const Run &r : runs)
		BOOST_TEST(r.lane == 0u);
	check_exact_cover(spans, runs);
}

BOOST_AUTO_TEST_CASE(direction_and_host_node_keep_runs_apart)
{
	std::vector<Span> spans{{&a, 0, chunk, true, 0}, {&a, chunk, chunk, false, 0}, {&a, 2 * chunk, chunk, true, 1}};
	auto runs = plan_runs(spans, 1, chunk);
	BOOST_TEST(runs.size() == 3u);
	check_exact_cover(spans, runs);
}

BOOST_AUTO_TEST_CASE(one_long_run_is_cut_into_even_shares_for_the_lanes)
{
	std::vector<Span> spans;
	for (std::uint64_t i = 0; i < 64; i++)
		spans.push_back({&a, i * chunk, chunk, true, -1});
	for (unsigned lanes : {1u, 2u, 4u, 8u}) {
		auto runs = plan_runs(spans, lanes, chunk);
		BOOST_TEST(runs.size() == lanes);
		std::vector<std::uint64_t> load(lanes, 0);
		for (const Run &r : runs)
			load[r.lane] += r.length;
		for (std::uint64_t l : load)
			BOOST_TEST(l == 64 * chunk / lanes);
		check_exact_cover(spans, runs);
	}
}

BOOST_AUTO_TEST_CASE(scattered_chunks_spread_over_the_lanes_and_no_lane_is_asked_for_nothing)
{
	std::vector<Span> spans;
	for (std::uint64_t i = 0; i < 10; i++)
		spans.push_back({&a, 2 * i * chunk, chunk, true, 0});	// none adjacent
	auto runs = plan_runs(spans, 4, chunk);
	BOOST_TEST(runs.size() == 10u);
	std::vector<int> per_lane(4, 0);
	for (const Run &r : runs)
		per_lane[r.lane]++;
	BOOST_TEST(*std::min_element(per_lane.begin(), per_lane.end()) == 2);
	BOOST_TEST(*std::max_element(per_lane.begin(), per_lane.end()) == 3);
	check_exact_cover(spans, runs);
	BOOST_TEST(plan_runs({}, 4, chunk).empty());
}
