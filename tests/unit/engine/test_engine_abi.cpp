// The engine's records in the kernel ABI's form: struct gos_tenant_stats,
// generated from tenant_stats.def, is laid out without holes, so the engine
// can fill it for the ioctl; messages become orders (kmod/engine/wire.c).
// The advice duration's own field: test_engine_rules' throttle_after_persist.
#define BOOST_TEST_MODULE engine_abi
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string_view>

#include "engine_harness.hpp"

using namespace gos_test;

namespace {

// Every field of tenant_stats.def is in the struct, in the list's order, of
// the list's width, with no hole before, between or after; the ioctl's
// struct holds it after its own two words.
constexpr bool layout_follows_the_def()
{
	std::size_t at = 0;
#define GOS_TENANT_STAT(type, name, kind, help)                                                  \
	if (offsetof(gos_tenant_stats, name) != at || sizeof(gos_tenant_stats::name) != sizeof(type)) \
		return false;                                                                     \
	at += sizeof(type);
#include <gpuoversub/tenant_stats.def>
	return at == sizeof(gos_tenant_stats);
}
static_assert(layout_follows_the_def(), "gos_tenant_stats does not follow tenant_stats.def, or has a hole");
static_assert(offsetof(gos_ioc_tenant_stats, stats) == 2 * sizeof(std::uint32_t) &&
		      sizeof(gos_ioc_tenant_stats) == offsetof(gos_ioc_tenant_stats, stats) + sizeof(gos_tenant_stats),
	      "gos_ioc_tenant_stats has a hole");
static_assert(offsetof(gos_ioc_gpu_stats, stats) == 2 * sizeof(std::uint32_t) &&
		      sizeof(gos_gpu_stats) == 7 * sizeof(std::uint64_t) + 2 * sizeof(std::uint32_t) &&
		      sizeof(gos_ioc_gpu_stats) == offsetof(gos_ioc_gpu_stats, stats) + sizeof(gos_gpu_stats),
	      "gos_ioc_gpu_stats has a hole");
// The allocation's layout flags took the place of a padding word, named
// pad before: the same size and offset, so agents and modules of either
// name agree.
static_assert(offsetof(gos_rep_alloc, layout) == 36 && sizeof(gos_rep_alloc) == 40 &&
		      offsetof(gos_ioc_alloc, layout) == 12 && sizeof(gos_ioc_alloc) == 56,
	      "gos_rep_alloc or gos_ioc_alloc changed layout");
// A record read() returns is this long.
static_assert(sizeof(gos_wire_order) == 80 && offsetof(gos_wire_order, numa_node) == 72,
	      "gos_wire_order changed layout");

// The daemon derives counters, metrics and reports from the kinds and help.
constexpr bool kinds_and_help_are_known()
{
	constexpr std::string_view kinds[] = {"identity", "setting", "gauge", "peak", "counter"};
	bool ok = true;
#define GOS_TENANT_STAT(type, name, kind, help) \
	ok = ok && !std::string_view(help).empty() && std::ranges::find(kinds, std::string_view(#kind)) != std::end(kinds);
#include <gpuoversub/tenant_stats.def>
	return ok;
}
static_assert(kinds_and_help_are_known(), "tenant_stats.def: a kind outside identity, setting, gauge, peak, counter");

} // namespace

// An order's fields are the message's; the GPU is the reader's index.
BOOST_AUTO_TEST_CASE(a_message_becomes_the_order_an_agent_reads)
{
	gos_message m{};
	m.id = 11;
	m.kind = GOS_MSG_EVICT;
	m.tenant = 5;
	m.buffer = 12;
	m.offset = 13 * MiB;
	m.length = 14 * MiB;
	m.device_bytes = 15;
	m.host_bytes = 16;
	m.entitlement = 17;
	m.oversub_ns = 18;
	gos_wire_order o;
	std::memset(&o, 0xff, sizeof o);
	gos_order_of_message(&m, 3, &o);
	BOOST_TEST(o.id == 11u);
	BOOST_TEST(o.kind == static_cast<std::uint32_t>(GOS_ORDER_EVICT));
	BOOST_TEST(o.gpu == 3u);
	BOOST_TEST(o.buffer == 12u);
	BOOST_TEST(o.offset == 13 * MiB);
	BOOST_TEST(o.length == 14 * MiB);
	BOOST_TEST(o.device_bytes == 15u);
	BOOST_TEST(o.host_bytes == 16u);
	BOOST_TEST(o.entitlement == 17u);
	BOOST_TEST(o.oversub_ns == 18u);
	BOOST_TEST(o.numa_node == -1);
	BOOST_TEST(o.pad == 0u);
}
