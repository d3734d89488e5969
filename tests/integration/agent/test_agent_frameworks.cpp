// The agent on the paths frameworks take, against the fake driver's models
// of the real one (tests/fakecuda): explicit pools served evictably in
// stream order, CUDA IPC refused on managed memory and working in device
// mode, unevictable memory held to the job's share, a framework sizing
// itself from cuMemGetInfo, and the agent's own thread leaving an
// application's stream capture alone.
#define BOOST_TEST_MODULE agent_frameworks
#include <boost/test/unit_test.hpp>

#include <cuda.h>

#include <sstream>

#include "agent_node.hpp"

using namespace gos_test;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_CASE(an_explicit_pool_is_served_evictably_and_freed_in_stream_order)
{
	Node n;
	n.daemon.register_step(1);
	AppProcess a(&n.daemon, 1, n.gpu);
	BOOST_REQUIRE_EQUAL(a.cmd("stream s"), "ok");
	BOOST_REQUIRE_EQUAL(a.cmd("pool p 32 s"), "ok");
	BOOST_TEST(count(call_log(n.gpu), "cuMemAllocManaged") == 1u);	// the agent's, not the pool's
	BOOST_TEST(count(call_log(n.gpu), "cuMemAllocFromPoolAsync") == 0u);
	BOOST_TEST(a.cmd("verify p") == "ok");
	BOOST_TEST(field(n.daemon.tenant(1), "unevictable") == 0u);

	// Freed on a stream that has not got there: the memory stays.
	BOOST_REQUIRE_EQUAL(a.cmd("pause s"), "ok");
	BOOST_REQUIRE_EQUAL(a.cmd("freeon p s"), "ok");
	BOOST_REQUIRE_EQUAL(a.cmd("alloc q 8"), "ok");	// an allocation reaps what is due
	BOOST_TEST(field(n.daemon.tenant(1), "demand") == 40 * MiB);
	BOOST_TEST(count(call_log(n.gpu), "cuMemFree ") == 0u);
	BOOST_REQUIRE_EQUAL(a.cmd("resume s"), "ok");
	BOOST_TEST(eventually([&] { return field(n.daemon.tenant(1), "demand") == 8 * MiB; }));
	BOOST_TEST(count(call_log(n.gpu), "cuMemFree ") == 1u);

	// A pool made for CUDA IPC stays the driver's: counted, unevictable.
	BOOST_REQUIRE_EQUAL(a.cmd("pool x 16 s ipc"), "ok");
	BOOST_TEST(count(call_log(n.gpu), "cuMemAllocFromPoolAsync") == 1u);
	BOOST_TEST(field(n.daemon.tenant(1), "unevictable") == 16 * MiB);
	BOOST_TEST(a.cmd("free x") == "ok");
	BOOST_TEST(eventually([&] { return field(n.daemon.tenant(1), "unevictable") == 0; }));
}

BOOST_AUTO_TEST_CASE(pools_stay_the_drivers_when_asked)
{
	Node n;
	n.daemon.register_step(1);
	AppProcess a(&n.daemon, 1, n.gpu, "direct", {{"GPUOVERSUB_POOLS", "device"}});
	BOOST_REQUIRE_EQUAL(a.cmd("stream s"), "ok");
	BOOST_REQUIRE_EQUAL(a.cmd("pool p 32 s"), "ok");
	BOOST_TEST(count(call_log(n.gpu), "cuMemAllocFromPoolAsync") == 1u);
	BOOST_TEST(field(n.daemon.tenant(1), "unevictable") == 32 * MiB);
	AppProcess b(&n.daemon, 1, n.gpu, "direct", {{"GPUOVERSUB_POOLS", "sometimes"}});
	BOOST_REQUIRE_EQUAL(b.cmd("alloc y 2"), "ok");	// settings are read at the first allocation
	BOOST_TEST(count(b.errors(), "GPUOVERSUB_POOLS=sometimes is neither evictable nor device") == 1u);
}

BOOST_AUTO_TEST_CASE(cuda_ipc_of_managed_memory_is_explained_once_and_device_mode_shares)
{
	Node n;
	n.daemon.register_step(1);
	n.daemon.register_step(2);
	AppProcess a(&n.daemon, 1, n.gpu);
	BOOST_REQUIRE_EQUAL(a.cmd("alloc m 8"), "ok");
	BOOST_TEST(a.cmd("ipc m") == "err " + std::to_string(CUDA_ERROR_INVALID_VALUE));	// the driver's refusal
	BOOST_TEST(a.cmd("ipc m") == "err " + std::to_string(CUDA_ERROR_INVALID_VALUE));
	BOOST_TEST(count(a.errors(), "GPUOVERSUB_IPC=device") == 1u);

	AppProcess exporter(&n.daemon, 2, n.gpu, "direct", {{"GPUOVERSUB_IPC", "device"}});
	BOOST_REQUIRE_EQUAL(exporter.cmd("alloc d 8"), "ok");
	std::string handle = exporter.cmd("ipc d");
	BOOST_REQUIRE(handle.rfind("ok ", 0) == 0);
	BOOST_TEST(field(n.daemon.tenant(2), "unevictable") == 8 * MiB);	// counted, not movable
	AppProcess importer(&n.daemon, 2, n.gpu);
	BOOST_REQUIRE_EQUAL(importer.cmd("import d 8 " + handle.substr(3)), "ok");
	BOOST_TEST(importer.cmd("verify d") == "ok");	// the exporter's pattern, through IPC
	BOOST_TEST(importer.cmd("free d") == "ok");
	BOOST_TEST(field(n.daemon.tenant(2), "demand") == 8 * MiB);	// the import is not counted again
}

BOOST_AUTO_TEST_CASE(unevictable_memory_beyond_the_share_fails_as_out_of_memory)
{
	Node n;
	n.daemon.register_step(1);
	n.daemon.register_step(2);
	AppProcess a(&n.daemon, 1, n.gpu), b(&n.daemon, 2, n.gpu);
	BOOST_REQUIRE_EQUAL(a.cmd("alloc big 96"), "ok");
	BOOST_REQUIRE_EQUAL(b.cmd("vmm v1 64"), "ok");
	std::string oom = "err " + std::to_string(CUDA_ERROR_OUT_OF_MEMORY);
	BOOST_TEST(b.cmd("vmm v2 96") == oom);	// the GPU has room, but 160 MiB pinned is over half of it
	BOOST_TEST(b.cmd("vmm v3 96") == oom);
	BOOST_TEST(count(b.errors(), "out of GPU memory") == 1u);	// told once, naming the cause and the remedy
	BOOST_TEST(count(b.errors(), "leave PyTorch's expandable_segments off") == 1u);
	BOOST_TEST(field(n.daemon.tenant(2), "unevictable") == 64 * MiB);
	auto t1 = n.daemon.tenant(1);
	BOOST_TEST(eventually([&] {
		t1 = n.daemon.tenant(1);
		return field(t1, "resident") >= field(t1, "entitlement");	// job 1 keeps its share
	}));
	BOOST_TEST(a.cmd("verify big") == "ok");
	BOOST_TEST(usage(a)[3] == 0u);	// the device was never asked for more than it has
}

BOOST_AUTO_TEST_CASE(a_framework_sizing_itself_from_mem_info_stays_within_the_job)
{
	Node n;
	n.daemon.register_step(1, {0}, 0, 500);	// --gpu-mem-oversub=0.5: 128 MiB
	AppProcess first(&n.daemon, 1, n.gpu), second(&n.daemon, 1, n.gpu);
	// As JAX preallocates: 75% of the total cuMemGetInfo reports.
	std::istringstream info(first.cmd("meminfo"));
	std::string ok;
	std::uint64_t free_bytes = 0, total = 0;
	info >> ok >> free_bytes >> total;
	BOOST_REQUIRE_EQUAL(total, 128 * MiB);
	std::uint64_t prealloc = total * 3 / 4 / MiB;
	BOOST_TEST(first.cmd("alloc arena " + std::to_string(prealloc)) == "ok");
	BOOST_TEST(second.cmd("alloc arena " + std::to_string(prealloc)) ==
		   "err " + std::to_string(CUDA_ERROR_OUT_OF_MEMORY));	// the job's limit, not the card's
	BOOST_TEST(field(n.daemon.tenant(1), "demand") == 96 * MiB);
	BOOST_TEST(second.cmd("meminfo") == "ok " + std::to_string(32 * MiB) + " " + std::to_string(128 * MiB));
}

BOOST_AUTO_TEST_CASE(the_agents_own_frees_leave_an_application_capture_alone)
{
	Node n;
	n.daemon.register_step(1);
	AppProcess a(&n.daemon, 1, n.gpu);
	for (const char *cmd : {"stream s", "stream c", "pool x 8 s", "pause s", "freeon x s", "capture begin c"})
		BOOST_REQUIRE_EQUAL(a.cmd(cmd), "ok");
	BOOST_REQUIRE_EQUAL(a.cmd("resume s"), "ok");	// the agent's thread frees x during the capture
	BOOST_TEST(eventually([&] { return count(call_log(n.gpu), "cuMemFree ") == 1u; }));
	BOOST_TEST(a.cmd("capture end c") == "ok");	// not invalidated by it
}
