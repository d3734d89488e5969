// The agent's mechanism at speed, against the fake driver: orders carried
// out by several lanes with every chunk moved and the data intact while the
// application allocates and frees; adjacent chunks moved in one call; the
// reserve serving allocations with exact accounting; its dead blocks
// discarded rather than migrated, or migrated where the driver refuses.
#define BOOST_TEST_MODULE agent_speed
#include <boost/test/unit_test.hpp>

#include <sstream>

#include "agent_node.hpp"

using namespace gos_test;
using namespace std::chrono_literals;

namespace {

using Env = std::vector<std::pair<std::string, std::string>>;

std::vector<std::uint64_t> stats(AppProcess &app)
{
	std::istringstream in(app.cmd("stats"));
	std::string ok;
	std::vector<std::uint64_t> s(8);
	in >> ok;
	for (auto &v : s)
		in >> v;
	return s;	// managed, device, host, allowed, evictions, returns, bytes evicted, bytes returned
}

std::uint64_t demand(Node &n, std::uint64_t job) { return field(n.daemon.tenant(job), "demand"); }

} // namespace

BOOST_AUTO_TEST_CASE(four_lanes_move_every_chunk_with_data_intact_while_the_application_allocates)
{
	Node n;
	n.daemon.register_step(1);
	n.daemon.register_step(2);
	// Each move costs time, so that the lanes really overlap.
	n.gpu.env = {{"FAKECUDA_COST", "advise=20+0,prefetch=50+100"}};
	AppProcess a(&n.daemon, 1, n.gpu, "direct", {{"GPUOVERSUB_EVICT_WORKERS", "4"}});
	for (const char *buf : {"a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8"})
		BOOST_REQUIRE_EQUAL(a.cmd(std::string("alloc ") + buf + " 24"), "ok");
	AppProcess b(&n.daemon, 2, n.gpu);
	BOOST_REQUIRE_EQUAL(b.cmd("alloc b1 120"), "ok");	// A must go down to its 128 MiB
	BOOST_TEST(a.cmd("threads 4 20", 60s) == "ok");	// allocating and freeing meanwhile
	BOOST_TEST(eventually([&] { return b.where("b1").first == 120 * MiB; }, 20s));
	auto s = stats(a);
	BOOST_TEST(s[4] > 0u);
	BOOST_TEST(s[6] >= 56 * MiB);	// 192 + 120 on 256
	BOOST_TEST(s[1] <= 136 * MiB);
	auto u = usage(a);
	// Nothing was asked of the device beyond what it has (the driver
	// evicting for it, as after an order that expired unanswered).
	BOOST_TEST(u[3] == 0u, "capacity " << u[0] << ", peak " << u[2] << ", asked at most " << u[3]
					  << ", evicted by the driver " << u[4] << "; the daemon's log:\n"
					  << n.daemon.log());
	for (const char *buf : {"a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8"})
		BOOST_TEST(a.cmd(std::string("verify ") + buf) == "ok");
	BOOST_TEST(b.cmd("verify b1") == "ok");
	BOOST_TEST(count(call_log(n.gpu), "cuMemDiscardAndPrefetchBatch") == 0u);	// live data is never discarded
}

BOOST_AUTO_TEST_CASE(adjacent_chunks_of_a_buffer_are_evicted_in_few_calls)
{
	Node n;
	n.daemon.register_step(1);
	n.daemon.register_step(2);
	// Each of A's moves takes 200 ms, so that the orders which arrive
	// meanwhile go together into its next batch.
	AppProcess a(&n.daemon, 1, n.gpu, "direct",
		     {{"GPUOVERSUB_EVICT_WORKERS", "1"}, {"FAKECUDA_COST", "prefetch=200000+0"}});
	BOOST_REQUIRE_EQUAL(a.cmd("alloc keep 144"), "ok");
	BOOST_REQUIRE_EQUAL(a.cmd("prio keep 15"), "ok");
	BOOST_REQUIRE_EQUAL(a.cmd("alloc low 48"), "ok");
	BOOST_REQUIRE_EQUAL(a.cmd("prio low 0"), "ok");	// evicted first, all of it
	AppProcess b(&n.daemon, 2, n.gpu);
	BOOST_REQUIRE_EQUAL(b.cmd("alloc b1 120"), "ok");
	BOOST_TEST(eventually([&] { return a.where("low").second == 48 * MiB; }, 10s));
	BOOST_TEST(eventually([&] { return b.where("b1").first == 120 * MiB; }, 10s));
	// The 24 chunks of low, counted in bytes: how many orders carried them
	// depends on timing, since the engine merges adjacent chunks into an
	// order the agent has not read yet (orders.c). The count follows the
	// move (it is taken once the engine acknowledges), so it may trail the
	// placement above.
	BOOST_TEST(eventually([&] { return stats(a)[6] >= 48 * MiB; }, 10s),
		   "stats " << a.cmd("stats") << "; the daemon's log:\n" << n.daemon.log());
	std::string log = call_log(n.gpu);
	auto chunks = stats(a)[6] / (2 * MiB);
	// One prefetch per run of adjacent chunks in a batch (B's own placement
	// counted too): fewer calls than chunks moved. How many fewer depends
	// on how the engine's decisions spread over its ticks, which load
	// stretches: 6 to 8 calls for 28 chunks here, 17 once under ASan with
	// both CPUs busy. The runs a batch makes are test_runs.cpp's.
	BOOST_TEST(count(log, "to=host") < chunks, count(log, "to=host") << " prefetches to the host for " << chunks << " chunks");
	BOOST_TEST(a.cmd("verify low") == "ok");
}

BOOST_AUTO_TEST_CASE(the_reserve_serves_allocations_and_the_engine_counts_it_exactly)
{
	Node n;
	n.daemon.register_step(1);
	AppProcess a(&n.daemon, 1, n.gpu, "direct", {{"GPUOVERSUB_RESERVE", "64M"}});
	BOOST_REQUIRE_EQUAL(a.cmd("alloc a 8"), "ok");
	// The agent's thread keeps a block of that size: the job's memory.
	BOOST_TEST(eventually([&] { return demand(n, 1) == 16 * MiB; }));
	BOOST_TEST(count(call_log(n.gpu), "cuMemAllocManaged") == 2u);
	BOOST_TEST(eventually([&] { return usage(a)[1] >= 16 * MiB; }));	// resident before it is offered
	std::istringstream info(a.cmd("meminfo"));
	std::string ok;
	std::uint64_t free_bytes = 0, total = 0;
	info >> ok >> free_bytes >> total;
	BOOST_TEST(total - free_bytes == 8 * MiB);	// the reserve is the process's to use
	// Served from the reserve: no allocation in the driver, nothing more counted.
	BOOST_REQUIRE_EQUAL(a.cmd("alloc b 8"), "ok");
	BOOST_TEST(eventually([&] { return demand(n, 1) == 24 * MiB; }));	// and refilled
	BOOST_TEST(count(call_log(n.gpu), "cuMemAllocManaged") == 3u);
	// A free returns to the reserve while there is room: still counted.
	BOOST_REQUIRE_EQUAL(a.cmd("free a"), "ok");
	BOOST_REQUIRE_EQUAL(a.cmd("free b"), "ok");
	BOOST_TEST(demand(n, 1) == 24 * MiB);
	BOOST_TEST(count(call_log(n.gpu), "cuMemFree ") == 0u);
	BOOST_REQUIRE_EQUAL(a.cmd("alloc c 8"), "ok");
	BOOST_TEST(a.cmd("verify c") == "ok");
	BOOST_TEST(demand(n, 1) == 24 * MiB);
	BOOST_TEST(count(call_log(n.gpu), "cuMemAllocManaged") == 3u);
	// Beyond the bound: neither kept nor stocked.
	BOOST_REQUIRE_EQUAL(a.cmd("alloc big 80"), "ok");
	BOOST_TEST(demand(n, 1) == 104 * MiB);
	BOOST_REQUIRE_EQUAL(a.cmd("free big"), "ok");
	BOOST_TEST(eventually([&] { return demand(n, 1) == 24 * MiB; }));
	BOOST_TEST(count(call_log(n.gpu), "cuMemFree ") == 1u);
	// A buffer given a priority is not taken back: its priority is the engine's.
	BOOST_REQUIRE_EQUAL(a.cmd("prio c 3"), "ok");
	BOOST_REQUIRE_EQUAL(a.cmd("free c"), "ok");
	BOOST_TEST(eventually([&] { return demand(n, 1) == 16 * MiB; }));
	BOOST_TEST(a.errors().find("gpuoversub[") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(under_pressure_the_reserve_is_discarded_not_migrated)
{
	for (bool refused : {false, true}) {
		Node n;
		n.daemon.register_step(1);
		n.daemon.register_step(2);
		Env env{{"GPUOVERSUB_RESERVE", "200M"}};
		if (refused)
			env.emplace_back("FAKECUDA_NO_DISCARD", "1");
		AppProcess a(&n.daemon, 1, n.gpu, "direct", env);
		for (const char *buf : {"r1", "r2", "r3", "r4", "r5", "r6"})
			BOOST_REQUIRE_EQUAL(a.cmd(std::string("alloc ") + buf + " 24"), "ok");
		for (const char *buf : {"r1", "r2", "r3", "r4", "r5", "r6"})
			BOOST_REQUIRE_EQUAL(a.cmd(std::string("free ") + buf), "ok");
		BOOST_TEST(eventually([&] { return demand(n, 1) == 168 * MiB; }));	// all of it the reserve's
		AppProcess b(&n.daemon, 2, n.gpu);
		BOOST_REQUIRE_EQUAL(b.cmd("alloc b1 120"), "ok");
		BOOST_TEST(eventually([&] { return b.where("b1").first == 120 * MiB; }, 10s));
		BOOST_TEST(stats(a)[4] > 0u);
		std::string log = call_log(n.gpu);
		if (refused) {	// the driver's refusal, then a migration
			BOOST_TEST(count(log, "cuMemDiscardAndPrefetchBatch 1 ranges to=host -> 801") > 0u);
			BOOST_TEST(count(log, "cuMemDiscardAndPrefetchBatch 1 ranges to=host -> 0") == 0u);
		} else {
			BOOST_TEST(count(log, "cuMemDiscardAndPrefetchBatch 1 ranges to=host -> 0") > 0u);
		}
		BOOST_TEST(usage(a)[3] == 0u);
		// A block taken from the reserve after all that is the application's, whole.
		BOOST_REQUIRE_EQUAL(a.cmd("alloc again 24"), "ok");
		BOOST_TEST(a.cmd("verify again") == "ok");
		BOOST_TEST(b.cmd("verify b1") == "ok");
	}
}

BOOST_AUTO_TEST_CASE(bad_worker_counts_and_reserve_sizes_are_named_and_the_defaults_stand)
{
	Node n;
	n.daemon.register_step(1);
	AppProcess a(&n.daemon, 1, n.gpu, "direct", {{"GPUOVERSUB_EVICT_WORKERS", "0"}, {"GPUOVERSUB_RESERVE", "lots"}});
	BOOST_REQUIRE_EQUAL(a.cmd("alloc a 8"), "ok");	// settings are read at the first allocation
	BOOST_TEST(count(a.errors(), "GPUOVERSUB_EVICT_WORKERS=0 is not between 1 and 64; using 4") == 1u);
	BOOST_TEST(count(a.errors(), "GPUOVERSUB_RESERVE=lots is not a size such as 256M; the reserve stays off") == 1u);
	BOOST_REQUIRE_EQUAL(a.cmd("free a"), "ok");
	BOOST_TEST(eventually([&] { return demand(n, 1) == 0; }));	// no reserve kept it
}
