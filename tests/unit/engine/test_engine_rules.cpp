// One test per engine rule, using the scenarios of the GPUswap thesis.
#define BOOST_TEST_MODULE engine_rules
#include <boost/test/unit_test.hpp>

#include <algorithm>

#include "engine_harness.hpp"

using namespace gos_test;

namespace {

gos_config with(std::uint32_t fairness, std::uint32_t victim = GOS_VICTIM_EXCESS,
		std::uint32_t select = GOS_SELECT_PRIORITY)
{
	gos_config cfg = Harness::defaults();
	cfg.fairness = fairness;
	cfg.victim = victim;
	cfg.select = select;
	return cfg;
}

std::size_t count_kind(const std::vector<gos_message> &msgs, std::uint32_t kind)
{
	return std::count_if(msgs.begin(), msgs.end(),
			     [kind](const gos_message &m) { return m.kind == kind; });
}

} // namespace

// Thesis Figure 1.1: under FCFS, B allocates first and keeps the whole GPU
// share it grabbed; A, allocating the same amount later, spills to the host.
BOOST_AUTO_TEST_CASE(fcfs_is_unfair_and_weighted_fixes_it)
{
	for (auto fairness : {GOS_FAIR_FCFS, GOS_FAIR_WEIGHTED}) {
		Harness h(with(fairness));
		h.gpu(1 * GiB);
		auto a = h.tenant(), b = h.tenant();
		auto ca = h.client(), cb = h.client();
		h.alloc(cb, b, 600 * MiB);
		auto ra = h.alloc(ca, a, 600 * MiB);
		h.settle();
		h.check();
		if (fairness == GOS_FAIR_FCFS) {
			BOOST_TEST(ra.host_bytes == 176 * MiB);
			BOOST_TEST(h.stats(b).resident == 600 * MiB);
			BOOST_TEST(h.stats(a).resident == 424 * MiB);
		} else {
			BOOST_TEST(h.stats(a).resident == 512 * MiB);
			BOOST_TEST(h.stats(b).resident == 512 * MiB);
			BOOST_TEST(h.stats(b).bytes_evicted == 88 * MiB);
			h.check_at_rest();
		}
	}
}

// Thesis Figure 1.2: static partitions leave A's unused share idle while B
// spills; water-filling gives B what A leaves unused.
BOOST_AUTO_TEST_CASE(static_underuses_and_weighted_fixes_it)
{
	for (auto fairness : {GOS_FAIR_STATIC, GOS_FAIR_WEIGHTED}) {
		Harness h(with(fairness));
		h.gpu(1 * GiB);
		auto a = h.tenant(), b = h.tenant();
		auto ca = h.client(), cb = h.client();
		h.alloc(ca, a, 400 * MiB);
		auto rb = h.alloc(cb, b, 600 * MiB);
		h.settle();
		h.check();
		if (fairness == GOS_FAIR_STATIC) {
			BOOST_TEST(rb.host_bytes == 88 * MiB);
			BOOST_TEST(h.gpu_stats().used == 912 * MiB);
		} else {
			BOOST_TEST(rb.host_bytes == 0u);
			BOOST_TEST(h.stats(b).resident == 600 * MiB);
			BOOST_TEST(h.stats(b).entitlement == 600 * MiB);
			h.check_at_rest();
		}
	}
}

// A buffer larger than the GPU is charged to its own tenant: the other
// tenant keeps its fair share, and the surplus goes to the host directly.
BOOST_AUTO_TEST_CASE(buffer_larger_than_gpu)
{
	Harness h;
	h.gpu(1 * GiB);
	auto a = h.tenant(), b = h.tenant();
	auto ca = h.client(), cb = h.client();
	h.alloc(cb, b, 300 * MiB);
	auto ra = h.alloc(ca, a, 3 * GiB);
	auto msgs = h.pump();
	BOOST_TEST(count_kind(msgs, GOS_MSG_EVICT) == 0u);
	BOOST_TEST(ra.host_bytes == 3 * GiB - 724 * MiB);
	BOOST_TEST(ra.device_bytes == 724 * MiB);
	BOOST_TEST(h.stats(b).resident == 300 * MiB);
	BOOST_TEST(h.stats(a).bytes_host_placed == ra.host_bytes);
	h.settle();
	h.check_at_rest();
}

BOOST_AUTO_TEST_CASE(remainder_chunk_is_shorter)
{
	Harness h;
	h.gpu(8 * MiB);
	auto a = h.tenant(), b = h.tenant();
	auto ca = h.client(), cb = h.client();
	auto rb = h.alloc(cb, b, 5 * MiB);	// chunks 2 + 2 + 1 MiB
	std::uint8_t st[3];
	BOOST_REQUIRE_EQUAL(gos_buffer_placement(h.eng(), cb, rb.buffer, 0, 3, st), 0);
	BOOST_TEST(st[2] == GOS_CHUNK_DEVICE);
	BOOST_TEST(gos_buffer_placement(h.eng(), cb, rb.buffer, 0, 4, st) == -EINVAL);
	h.alloc(ca, a, 4 * MiB);	// needs 1 MiB more: one chunk of B goes
	auto msgs = h.pump();
	BOOST_REQUIRE_EQUAL(count_kind(msgs, GOS_MSG_EVICT), 1u);
	auto ev = *std::find_if(msgs.begin(), msgs.end(), [](auto &m) { return m.kind == GOS_MSG_EVICT; });
	BOOST_TEST((ev.length == 2 * MiB || ev.length == 1 * MiB));
	BOOST_TEST(ev.offset % (2 * MiB) == 0u);
	BOOST_TEST(h.stats(b).host == ev.length);
	h.check();
}

BOOST_AUTO_TEST_CASE(lowest_priority_goes_first_and_random_mode_ignores_it)
{
	for (auto select : {GOS_SELECT_PRIORITY, GOS_SELECT_RANDOM}) {
		std::uint64_t low_evicted = 0, high_evicted = 0;
		for (std::uint64_t seed = 1; seed <= 20; seed++) {
			Harness h(with(GOS_FAIR_WEIGHTED, GOS_VICTIM_EXCESS, select), seed);
			h.gpu(64 * MiB);
			auto a = h.tenant(), b = h.tenant();
			auto ca = h.client(), cb = h.client();
			auto hi = h.alloc(cb, b, 32 * MiB, 12);
			auto lo = h.alloc(cb, b, 32 * MiB, 2);
			h.alloc(ca, a, 16 * MiB);
			for (auto &m : h.pump()) {
				if (m.kind != GOS_MSG_EVICT)
					continue;
				(m.buffer == lo.buffer ? low_evicted : high_evicted) += m.length;
				BOOST_TEST((m.buffer == lo.buffer || m.buffer == hi.buffer));
			}
			h.check();
		}
		if (select == GOS_SELECT_PRIORITY) {
			BOOST_TEST(high_evicted == 0u);
			BOOST_TEST(low_evicted == 20 * 16 * MiB);
		} else {
			BOOST_TEST(high_evicted > 0u);
			BOOST_TEST(low_evicted > 0u);
		}
	}
}

BOOST_AUTO_TEST_CASE(weights_split_the_gpu)
{
	Harness h;
	h.gpu(900 * MiB);
	auto a = h.tenant(2), b = h.tenant(1);
	auto ca = h.client(), cb = h.client();
	h.alloc(cb, b, 900 * MiB);
	h.alloc(ca, a, 900 * MiB);
	h.settle();
	BOOST_TEST(h.stats(a).entitlement == 600 * MiB);
	BOOST_TEST(h.stats(a).resident == 600 * MiB);
	BOOST_TEST(h.stats(b).resident == 300 * MiB);
	h.check_at_rest();
}

// Freed memory goes back to the tenant furthest below its share.
BOOST_AUTO_TEST_CASE(return_after_free)
{
	Harness h;
	h.gpu(1 * GiB);
	auto a = h.tenant(), b = h.tenant(), c = h.tenant();
	auto ca = h.client(), cb = h.client(), cc = h.client();
	h.alloc(ca, a, 600 * MiB);
	h.alloc(cb, b, 600 * MiB);
	auto rc = h.alloc(cc, c, 300 * MiB);
	h.settle();
	BOOST_TEST(h.stats(a).host > 0u);
	BOOST_TEST(h.stats(b).host > 0u);
	BOOST_REQUIRE_EQUAL(gos_free(h.eng(), cc, rc.buffer), 0);
	auto msgs = h.pump();
	BOOST_TEST(count_kind(msgs, GOS_MSG_RETURN) > 0u);
	h.settle();
	BOOST_TEST(h.stats(a).host == 88 * MiB);
	BOOST_TEST(h.stats(b).host == 88 * MiB);
	BOOST_TEST(h.stats(a).bytes_returned > 0u);
	BOOST_TEST(h.gpu_stats().used == 1 * GiB);
	h.check_at_rest();
}

// A tenant that stays oversubscribed is throttled, told so once, and not
// pulled back above its share when memory frees up for a moment.
BOOST_AUTO_TEST_CASE(throttle_after_persist)
{
	gos_config cfg = Harness::defaults();
	cfg.throttle_persist_ns = 2000ULL * 1000000ULL;
	Harness h(cfg);
	h.gpu(1 * GiB);
	auto a = h.tenant(), b = h.tenant();
	auto ca = h.client(), cb = h.client();
	h.alloc(cb, b, 512 * MiB);
	h.alloc(ca, a, 1 * GiB);
	h.settle();
	BOOST_TEST(!h.stats(a).throttled);
	h.advance_ms(2100);
	gos_tick(h.eng());
	auto msgs = h.pump();
	BOOST_TEST(h.stats(a).throttled);
	BOOST_TEST(h.stats(a).throttle_events == 1u);
	BOOST_REQUIRE_EQUAL(count_kind(msgs, GOS_MSG_ADVICE), 1u);
	BOOST_TEST(msgs.back().entitlement == 512 * MiB);
	// How long A has had bytes in host RAM, in the order's own field.
	BOOST_TEST(msgs.back().oversub_ns >= 2100ULL * 1000000ULL);
	BOOST_TEST(msgs.back().oversub_ns == h.stats(a).oversub_ns);
	gos_wire_order advice;
	gos_order_of_message(&msgs.back(), 0, &advice);
	BOOST_TEST(advice.kind == static_cast<std::uint32_t>(GOS_ORDER_ADVICE));
	BOOST_TEST(advice.oversub_ns == msgs.back().oversub_ns);
	BOOST_TEST(advice.offset == 0u);
	// B drops to 256 MiB: A's share becomes 768 MiB, and A returns only to it.
	auto rb2 = h.alloc(cb, b, 1 * MiB);
	BOOST_REQUIRE_EQUAL(gos_free(h.eng(), cb, rb2.buffer), 0);
	gos_tick(h.eng());
	h.settle();
	BOOST_TEST(h.stats(a).resident <= h.stats(a).entitlement);
	h.advance_ms(5000);
	gos_tick(h.eng());
	BOOST_TEST(count_kind(h.pump(), GOS_MSG_ADVICE) == 0u);	// once per episode
	h.check_at_rest();
}

// A 64 MiB GPU that the second tenant fills, its client answering orders
// with reply; then the first asks for 32 MiB, which waits on an order to it.
struct Squeeze {
	std::uint32_t asker, holder, asker_client, holder_client;
	gos_alloc_result held, asked;
};

Squeeze squeeze(Harness &h, Reply reply)
{
	h.gpu(64 * MiB);
	Squeeze s{h.tenant(), h.tenant(), h.client(), h.client(), {}, {}};
	s.held = h.alloc(s.holder_client, s.holder, 64 * MiB);
	h.reply_of[s.holder_client] = reply;
	s.asked = h.alloc(s.asker_client, s.asker, 32 * MiB);
	return s;
}

// An order its client lets expire is forfeited: the chunks count in host
// RAM (the driver evicts managed memory itself), so the allocation that
// waited on them gets the device. The stalled client is asked nothing more
// until it is heard: the reducer takes its chunks at once, and its own new
// buffers start on the host. Reading its messages is not hearing from it
// (the daemon reads them); answering an order is.
BOOST_AUTO_TEST_CASE(failed_and_expired_orders)
{
	gos_config cfg = Harness::defaults();
	cfg.order_timeout_ns = 100ULL * 1000000ULL;
	Harness h(cfg);
	[[maybe_unused]] auto [a, b, ca, cb, held, ra] = squeeze(h, Reply::ignore);
	BOOST_TEST(ra.waiting_bytes == 32 * MiB);
	BOOST_TEST(h.gpu_stats().outstanding_orders > 0u);
	h.pump();
	h.check();
	BOOST_TEST(h.stats(b).stalled_clients == 0u);
	h.advance_ms(150);
	gos_tick(h.eng());
	auto msgs = h.pump();
	BOOST_REQUIRE_EQUAL(count_kind(msgs, GOS_MSG_SETTLED), 1u);
	auto settled = *std::find_if(msgs.begin(), msgs.end(), [](auto &m) { return m.kind == GOS_MSG_SETTLED; });
	BOOST_TEST(settled.buffer == ra.buffer);
	BOOST_TEST(settled.device_bytes == 32 * MiB);
	BOOST_TEST(settled.host_bytes == 0u);
	BOOST_TEST(h.stats(a).resident == 32 * MiB);
	BOOST_TEST(h.stats(b).expired_orders > 0u);
	BOOST_TEST(h.stats(b).failed_orders == 0u);
	BOOST_TEST(h.stats(b).bytes_forfeited == 32 * MiB);
	BOOST_TEST(h.stats(b).resident == 32 * MiB);
	BOOST_TEST(h.stats(b).host == 32 * MiB);
	BOOST_TEST(h.stats(b).clients == 1u);
	BOOST_TEST(h.stats(b).stalled_clients == 1u);	// pump() read its messages
	BOOST_TEST(h.gpu_stats().waiting == 0u);
	h.check();

	// Stalled, B gets no device memory, though A's free left room.
	BOOST_REQUIRE_EQUAL(gos_free(h.eng(), ca, ra.buffer), 0);
	auto rb = h.alloc(cb, b, 8 * MiB);
	BOOST_TEST(rb.host_bytes == 8 * MiB);
	// C, three times B's weight, is entitled to 48 MiB of the 64: the 16 MiB
	// B holds beyond its share are taken at once, with no order to wait on.
	auto c = h.tenant(3);
	auto cc = h.client();
	auto rc = h.alloc(cc, c, 48 * MiB);
	BOOST_TEST(rc.device_bytes == 48 * MiB);
	BOOST_TEST(h.gpu_stats().outstanding_orders == 0u);
	BOOST_TEST(h.stats(b).bytes_forfeited == 48 * MiB);
	BOOST_TEST(h.stats(b).resident == 16 * MiB);
	h.check();

	// A late answer to the expired order is refused, and B is heard.
	BOOST_TEST(gos_order_ack(h.eng(), cb, 1) == -ENOENT);
	BOOST_TEST(h.stats(b).stalled_clients == 0u);
	h.reply_of[cb] = Reply::ack;
	h.settle();
	BOOST_TEST(h.stats(b).resident == 16 * MiB);
	BOOST_TEST(h.stats(c).resident == 48 * MiB);
	h.check_at_rest();

	// gos_client_heard() un-stalls as an answer does.
	Harness k(cfg);
	auto q = squeeze(k, Reply::ignore);
	auto cq = q.holder_client;
	k.pump();
	k.advance_ms(150);
	gos_tick(k.eng());
	BOOST_TEST(k.stats(q.holder).stalled_clients == 1u);
	BOOST_TEST(gos_client_heard(k.eng(), cq) == 0);
	BOOST_TEST(k.stats(q.holder).stalled_clients == 0u);
	BOOST_TEST(gos_client_heard(k.eng(), 999) == -EINVAL);
	k.check();

	// Explicit failure pins the chunks until their priority is set again.
	Harness f(Harness::defaults());
	auto [x, y, cx, cy, ry, rx] = squeeze(f, Reply::fail);
	f.pump();
	BOOST_TEST(f.stats(y).resident == 64 * MiB);
	BOOST_TEST(f.stats(y).failed_orders > 0u);
	BOOST_TEST(f.stats(y).expired_orders == 0u);
	BOOST_TEST(f.stats(x).host == 32 * MiB);
	std::uint8_t st[32];
	BOOST_REQUIRE_EQUAL(gos_buffer_placement(f.eng(), cx, rx.buffer, 0, 16, st), 0);
	BOOST_TEST(std::all_of(st, st + 16, [](auto s) { return s == GOS_CHUNK_HOST; }));
	f.check();
	f.reply_of[cy] = Reply::ack;
	BOOST_REQUIRE_EQUAL(gos_set_priority(f.eng(), cy, ry.buffer, 0, 64 * MiB, 4), 0);
	f.settle();
	BOOST_TEST(f.stats(y).resident == 32 * MiB);
	f.check_at_rest();
}

BOOST_AUTO_TEST_CASE(client_exit_releases_and_returns)
{
	Harness h;
	h.gpu(1 * GiB);
	auto a = h.tenant(), b = h.tenant();
	auto ca = h.client(), cb = h.client();
	h.alloc(ca, a, 1 * GiB);
	h.alloc(cb, b, 1 * GiB);
	h.alloc(cb, b, 8 * MiB, 1);
	h.settle();
	BOOST_TEST(h.stats(a).host == 512 * MiB);
	BOOST_REQUIRE_EQUAL(gos_client_exit(h.eng(), cb), 0);
	BOOST_TEST(gos_client_exit(h.eng(), cb) == -EINVAL);
	BOOST_TEST(h.stats(b).demand == 0u);
	BOOST_TEST(h.stats(b).buffers == 0u);
	h.settle();
	BOOST_TEST(h.stats(a).host == 0u);
	BOOST_TEST(h.stats(a).resident == 1 * GiB);
	BOOST_TEST(h.stats(a).oversub_ns > 0u);
	BOOST_REQUIRE_EQUAL(gos_tenant_destroy(h.eng(), b), 0);
	BOOST_TEST(gos_tenant_destroy(h.eng(), a) == -EBUSY);
	h.check_at_rest();
}

// Memory used outside the engine shrinks capacity, and the engine evicts.
BOOST_AUTO_TEST_CASE(capacity_changes_at_run_time)
{
	Harness h;
	h.gpu(1 * GiB);
	auto a = h.tenant(), b = h.tenant();
	auto ca = h.client(), cb = h.client();
	h.alloc(ca, a, 400 * MiB);
	h.alloc(cb, b, 400 * MiB);
	BOOST_REQUIRE_EQUAL(gos_gpu_set_external(h.eng(), 0, 424 * MiB), 0);
	auto msgs = h.pump();
	BOOST_TEST(count_kind(msgs, GOS_MSG_EVICT) > 0u);
	BOOST_TEST(h.gpu_stats().capacity == 600 * MiB);
	BOOST_TEST(h.gpu_stats().used <= 600 * MiB);
	BOOST_TEST(h.stats(a).resident == 300 * MiB);
	h.check();
	BOOST_REQUIRE_EQUAL(gos_gpu_set_external(h.eng(), 0, 0), 0);
	h.settle();
	BOOST_TEST(h.gpu_stats().used == 800 * MiB);
	h.check_at_rest();
}

BOOST_AUTO_TEST_CASE(unevictable_is_counted_and_limit_enforced)
{
	Harness h;
	h.gpu(1 * GiB);
	auto a = h.tenant(1, 256 * MiB), b = h.tenant();
	auto ca = h.client(), cb = h.client();
	h.alloc(cb, b, 900 * MiB);
	gos_alloc_result r{};
	BOOST_REQUIRE_EQUAL(gos_alloc(h.eng(), ca, a, 200 * MiB, 8, GOS_ALLOC_UNEVICTABLE, &r), 0);
	BOOST_TEST(r.device_bytes == 200 * MiB);
	BOOST_TEST(h.stats(a).unevictable == 200 * MiB);
	BOOST_TEST(gos_alloc(h.eng(), ca, a, 100 * MiB, 8, 0, &r) == -EDQUOT);
	h.settle();
	BOOST_TEST(h.stats(b).resident == 824 * MiB);
	BOOST_TEST(h.stats(a).evictions == 0u);
	h.check_at_rest();
}

BOOST_AUTO_TEST_CASE(unevictable_memory_stays_within_the_weighted_share)
{
	Harness h;
	h.gpu(1 * GiB);
	auto a = h.tenant(), b = h.tenant();	// equal weights: 512 MiB each
	auto ca = h.client(), cb = h.client();
	h.alloc(cb, b, 600 * MiB);
	gos_alloc_result r{};
	BOOST_REQUIRE_EQUAL(gos_alloc(h.eng(), ca, a, 400 * MiB, 8, GOS_ALLOC_UNEVICTABLE, &r), 0);
	BOOST_TEST(gos_alloc(h.eng(), ca, a, 200 * MiB, 8, GOS_ALLOC_UNEVICTABLE, &r) == -ENOSPC);
	BOOST_TEST(h.stats(a).unevictable == 400 * MiB);
	BOOST_REQUIRE_EQUAL(gos_alloc(h.eng(), ca, a, 200 * MiB, 8, 0, &r), 0);	// evictable memory still comes
	h.settle();
	BOOST_TEST(h.stats(b).resident == h.stats(b).entitlement);	// held to its share, not below
	BOOST_TEST(h.stats(b).entitlement == 512 * MiB);
	h.check_at_rest();
}

// Memory a job's processes hold without the agent (NVML) is that job's:
// it counts in its share, so its own evictable memory makes room, and
// its neighbour keeps its entitlement; gone, it frees the room again.
BOOST_AUTO_TEST_CASE(unmanaged_memory_is_its_tenant_s_own)
{
	Harness h;
	h.gpu(1 * GiB);
	auto a = h.tenant(), b = h.tenant();	// equal weights: 512 MiB each
	auto ca = h.client(), cb = h.client();
	h.alloc(ca, a, 400 * MiB);
	h.alloc(cb, b, 600 * MiB);
	h.settle();
	BOOST_REQUIRE_EQUAL(gos_tenant_set_unmanaged(h.eng(), a, 300 * MiB), 0);
	h.settle();
	BOOST_TEST(h.stats(a).unmanaged == 300 * MiB);
	BOOST_TEST(h.stats(a).unevictable == 300 * MiB);
	BOOST_TEST(h.stats(a).demand == 700 * MiB);
	BOOST_TEST(h.stats(b).resident == 512 * MiB);	// the neighbour keeps its share
	BOOST_TEST(h.stats(a).resident == 512 * MiB);	// of which 300 unmanaged
	BOOST_TEST(h.stats(a).bytes_evicted >= 188 * MiB);
	BOOST_TEST(h.stats(b).bytes_evicted == 88 * MiB);	// only what it had over its share
	h.check_at_rest();
	BOOST_REQUIRE_EQUAL(gos_tenant_set_unmanaged(h.eng(), a, 100 * MiB), 0);
	h.settle();
	BOOST_TEST(h.stats(a).resident == 500 * MiB);	// all of its own back, 100 unmanaged
	BOOST_TEST(h.stats(a).peak_unmanaged == 300 * MiB);
	h.check_at_rest();
	BOOST_TEST(gos_tenant_set_unmanaged(h.eng(), 999, MiB) == -EINVAL);
	BOOST_TEST(gos_tenant_set_unmanaged(h.eng(), a, 1ULL << 48) == -EINVAL);	// 256 TiB: no GPU
	// A tenant with only unmanaged memory is destroyed with it.
	auto c = h.tenant();
	BOOST_REQUIRE_EQUAL(gos_tenant_set_unmanaged(h.eng(), c, 64 * MiB), 0);
	std::uint64_t used = h.gpu_stats().used;
	BOOST_REQUIRE_EQUAL(gos_tenant_destroy(h.eng(), c), 0);
	BOOST_TEST(h.gpu_stats().used == used - 64 * MiB);
	h.check();
}

BOOST_AUTO_TEST_CASE(lru_victim_takes_the_oldest_chunk)
{
	Harness h(with(GOS_FAIR_WEIGHTED, GOS_VICTIM_LRU, GOS_SELECT_RANDOM));
	h.gpu(8 * MiB);
	auto a = h.tenant(), b = h.tenant();
	auto ca = h.client(), cb = h.client();
	auto old_a = h.alloc(ca, a, 2 * MiB);
	h.alloc(cb, b, 6 * MiB);
	h.alloc(cb, b, 2 * MiB);
	auto msgs = h.pump();
	BOOST_REQUIRE_EQUAL(count_kind(msgs, GOS_MSG_EVICT), 1u);
	BOOST_TEST(msgs[0].buffer == old_a.buffer);
	h.check();
}

BOOST_AUTO_TEST_CASE(stats_track_peaks_and_time)
{
	Harness h;
	h.gpu(100 * MiB);
	auto a = h.tenant(), b = h.tenant();
	auto ca = h.client(), cb = h.client();
	auto rb = h.alloc(cb, b, 100 * MiB);
	h.alloc(ca, a, 60 * MiB);
	h.pump();
	h.advance_ms(1000);
	auto st = h.stats(b);
	BOOST_TEST(st.peak_resident == 100 * MiB);
	BOOST_TEST(st.peak_host == st.host);
	BOOST_TEST(st.oversub_ns == 1000000000ULL);
	BOOST_TEST(st.slow_allocs == 0u);
	BOOST_TEST(h.stats(a).slow_allocs == 1u);
	BOOST_REQUIRE_EQUAL(gos_free(h.eng(), cb, rb.buffer), 0);
	h.advance_ms(500);
	BOOST_TEST(h.stats(b).oversub_ns == 1000000000ULL);
	h.check();
}

BOOST_AUTO_TEST_CASE(waterfill_shares)
{
	std::uint64_t demand[] = {100, 500, 900, 0};
	std::uint32_t weight[] = {1, 1, 2, 1};
	std::uint64_t share[4];
	gos_waterfill(4, demand, weight, 1000, share);
	BOOST_TEST(share[0] == 100u);
	BOOST_TEST(share[3] == 0u);
	BOOST_TEST(share[1] == 300u);
	BOOST_TEST(share[2] == 600u);
	gos_waterfill(4, demand, weight, 5000, share);
	BOOST_TEST(share[2] == 900u);
}

BOOST_AUTO_TEST_CASE(bad_input_is_refused)
{
	Harness h;
	gos_engine *e = h.eng();
	gos_config bad = Harness::defaults();
	gos_engine *other = nullptr;
	bad.chunk_size = 1000;
	BOOST_TEST(gos_engine_create(&bad, &other) == -EINVAL);
	bad = Harness::defaults();
	bad.fairness = 7;
	BOOST_TEST(gos_engine_create(&bad, &other) == -EINVAL);
	BOOST_TEST(gos_gpu_add(e, 0, 0, 0) == -EINVAL);
	BOOST_TEST(gos_gpu_add(e, 0, 10, 11) == -EINVAL);
	h.gpu(1 * GiB);
	BOOST_TEST(gos_gpu_add(e, 0, 1 * GiB, 0) == -EEXIST);
	std::uint32_t t = 0, c = 0;
	BOOST_TEST(gos_tenant_create(e, 5, 1, 0, &t) == -EINVAL);
	BOOST_TEST(gos_tenant_create(e, 0, 0, 0, &t) == -EINVAL);
	BOOST_TEST(gos_tenant_create(e, 0, 70000, 0, &t) == -EINVAL);
	t = h.tenant();
	c = h.client();
	gos_alloc_result r{};
	BOOST_TEST(gos_alloc(e, c, t, 0, 8, 0, &r) == -EINVAL);
	BOOST_TEST(gos_alloc(e, c, t, MiB, 16, 0, &r) == -EINVAL);
	BOOST_TEST(gos_alloc(e, c, t, MiB, 8, 0x80, &r) == -EINVAL);
	BOOST_TEST(gos_alloc(e, c + 9, t, MiB, 8, 0, &r) == -EINVAL);
	BOOST_TEST(gos_alloc(e, c, t + 9, MiB, 8, 0, &r) == -EINVAL);
	BOOST_TEST(gos_alloc(e, c, t, 1ULL << 60, 8, 0, &r) == -EINVAL);
	BOOST_TEST(gos_alloc(e, c, t, MiB, 8, 0, nullptr) == -EINVAL);
	auto ok = h.alloc(c, t, 3 * MiB);
	auto other_client = h.client();
	BOOST_TEST(gos_free(e, other_client, ok.buffer) == -ENOENT);
	BOOST_TEST(gos_free(e, c, ok.buffer + 1) == -ENOENT);
	BOOST_TEST(gos_set_priority(e, c, ok.buffer, 0, 3 * MiB, 99) == -EINVAL);
	BOOST_TEST(gos_set_priority(e, c, ok.buffer, 2 * MiB, 2 * MiB, 3) == -EINVAL);
	BOOST_TEST(gos_set_priority(e, c, ok.buffer, 0, 0, 3) == -EINVAL);
	BOOST_TEST(gos_set_priority(e, c, ok.buffer, ~0ULL, 2, 3) == -EINVAL);
	BOOST_TEST(gos_order_ack(e, c, 12345) == -ENOENT);
	BOOST_TEST(gos_order_fail(e, c + 9, 1) == -EINVAL);
	gos_message m[2];
	BOOST_TEST(gos_read_messages(e, c + 9, m, 2) == -EINVAL);
	BOOST_TEST(gos_read_messages(e, c, nullptr, 2) == -EINVAL);
	BOOST_TEST(gos_tenant_set_policy(e, t, 0, 0) == -EINVAL);
	BOOST_TEST(gos_gpu_set_external(e, 3, 0) == -EINVAL);
	BOOST_TEST(gos_free(e, c, ok.buffer) == 0);
	BOOST_TEST(gos_free(e, c, ok.buffer) == -ENOENT);
	h.check();
}

// A tenant's cap on buffers: one more fails with ENOBUFS, nothing of it
// counted; a free makes room, other tenants are not held to it, 0 lifts it.
BOOST_AUTO_TEST_CASE(a_tenants_buffer_cap_refuses_one_more_with_enobufs)
{
	Harness h;
	h.gpu(1 * GiB);
	auto t = h.tenant(1), other = h.tenant(1);
	auto c = h.client();
	BOOST_REQUIRE_EQUAL(gos_tenant_set_max_buffers(h.eng(), t, 2), 0);
	BOOST_TEST(gos_tenant_set_max_buffers(h.eng(), t + 9, 2) == -EINVAL);
	gos_alloc_result first{}, r{};
	BOOST_REQUIRE_EQUAL(gos_alloc(h.eng(), c, t, 4 * MiB, 0, 0, &first), 0);
	BOOST_REQUIRE_EQUAL(gos_alloc(h.eng(), c, t, 4 * MiB, 0, GOS_ALLOC_UNEVICTABLE, &r), 0);
	BOOST_TEST(gos_alloc(h.eng(), c, t, 4 * MiB, 0, 0, &r) == -ENOBUFS);
	BOOST_TEST(h.stats(t).buffers == 2u);
	BOOST_TEST(h.stats(t).demand == 8 * MiB);
	BOOST_TEST(gos_alloc(h.eng(), c, other, 4 * MiB, 0, 0, &r) == 0);
	BOOST_REQUIRE_EQUAL(gos_free(h.eng(), c, first.buffer), 0);
	BOOST_TEST(gos_alloc(h.eng(), c, t, 4 * MiB, 0, 0, &r) == 0);
	BOOST_TEST(gos_alloc(h.eng(), c, t, 4 * MiB, 0, 0, &r) == -ENOBUFS);
	BOOST_REQUIRE_EQUAL(gos_tenant_set_max_buffers(h.eng(), t, 0), 0);
	BOOST_TEST(gos_alloc(h.eng(), c, t, 4 * MiB, 0, 0, &r) == 0);
	h.settle();
	h.check_at_rest();
}

// A minimum share comes before weights: a light tenant with a guaranteed
// 600 MiB keeps it against a heavier one.
BOOST_AUTO_TEST_CASE(minimum_share_is_guaranteed)
{
	Harness h;
	h.gpu(1 * GiB);
	auto a = h.tenant(1), b = h.tenant(8);
	auto ca = h.client(), cb = h.client();
	BOOST_REQUIRE_EQUAL(gos_tenant_set_min(h.eng(), a, 600 * MiB), 0);
	BOOST_TEST(gos_tenant_set_min(h.eng(), a + 9, 1) == -EINVAL);
	h.alloc(cb, b, 1 * GiB);
	h.alloc(ca, a, 1 * GiB);
	h.settle();
	BOOST_TEST(h.stats(a).entitlement == 600 * MiB + 424 * MiB / 9);
	BOOST_TEST(h.stats(a).resident >= 600 * MiB);
	BOOST_TEST(h.stats(a).min_bytes == 600 * MiB);
	// Promises beyond the GPU are scaled down together.
	BOOST_REQUIRE_EQUAL(gos_tenant_set_min(h.eng(), b, 1 * GiB), 0);
	BOOST_TEST(h.stats(a).entitlement + h.stats(b).entitlement <= 1 * GiB);
	BOOST_TEST(h.stats(b).entitlement > h.stats(a).entitlement);
	h.settle();
	h.check_at_rest();
}

BOOST_AUTO_TEST_CASE(a_buffer_registered_again_is_accounted_but_not_counted_anew)
{
	Harness h;
	h.gpu(1 * GiB);
	auto a = h.tenant(), b = h.tenant();
	auto ca = h.client(), cb = h.client();
	h.alloc(cb, b, 900 * MiB);
	gos_alloc_result r{};
	// After a daemon restart the agent registers what it had: the memory
	// counts, and evictions make room, but the job made no new allocation.
	BOOST_REQUIRE_EQUAL(gos_alloc(h.eng(), ca, a, 300 * MiB, 8, GOS_ALLOC_AGAIN, &r), 0);
	BOOST_TEST(h.stats(a).demand == 300 * MiB);
	BOOST_TEST(h.stats(a).allocs == 0u);
	BOOST_TEST(h.stats(a).slow_allocs == 0u);
	BOOST_REQUIRE_EQUAL(gos_alloc(h.eng(), ca, a, 100 * MiB, 8, 0, &r), 0);
	BOOST_TEST(h.stats(a).allocs == 1u);
	BOOST_TEST(h.stats(a).slow_allocs == 1u);
	BOOST_TEST(gos_alloc(h.eng(), ca, a, 1 * MiB, 8, 0x4, &r) == -EINVAL);	// no such flag
	h.settle();
	h.check_at_rest();
}

BOOST_AUTO_TEST_CASE(the_wire_allocation_flags_map_to_the_engine_s_and_unknown_ones_are_refused)
{
	std::uint32_t flags = ~0u;
	BOOST_TEST(gos_alloc_flags_of_wire(0, &flags) == 0);
	BOOST_TEST(flags == 0u);
	BOOST_TEST(gos_alloc_flags_of_wire(GOS_ALLOC_FLAG_UNEVICTABLE | GOS_ALLOC_FLAG_AGAIN, &flags) == 0);
	BOOST_TEST(flags == (GOS_ALLOC_UNEVICTABLE | GOS_ALLOC_AGAIN));
	for (std::uint32_t bit = 2; bit < 32; bit++)
		BOOST_TEST(gos_alloc_flags_of_wire(1u << bit, &flags) == -EINVAL);
}

// Memory returned beyond a tenant's share is a loan; a neighbour that takes
// its share back at once sets off a backoff that doubles with each quick
// revocation, and a loan that lasts relaxes it (lend.c).
BOOST_AUTO_TEST_CASE(a_loan_revoked_at_once_backs_off_and_a_lasting_one_relaxes)
{
	gos_config cfg = Harness::defaults();
	cfg.lend_backoff_ns = 1000 * 1000000ULL;
	cfg.lend_backoff_max_ns = 3000 * 1000000ULL;
	Harness h(cfg);
	h.gpu(64 * MiB);
	auto lender = h.tenant(), borrower = h.tenant();
	auto cl = h.client(), cb = h.client();
	h.alloc(cb, borrower, 48 * MiB);
	std::uint64_t batch = h.alloc(cl, lender, 32 * MiB).buffer;
	h.pump();
	auto resident = [&] { return h.stats(borrower).resident; };
	auto run_ms = [&](std::uint64_t ms) {	// the return interval's ticks
		for (std::uint64_t t = 0; t < ms; t += 50) {
			h.advance_ms(50);
			gos_tick(h.eng());
			h.pump();
			h.check();
		}
	};
	auto lend = [&] {
		BOOST_REQUIRE_EQUAL(gos_free(h.eng(), cl, batch), 0);
		h.pump();
	};
	auto reclaim = [&] {
		batch = h.alloc(cl, lender, 32 * MiB).buffer;
		h.pump();
		BOOST_TEST(resident() == 32 * MiB);
	};
	BOOST_TEST(resident() == 32 * MiB);
	lend();
	BOOST_TEST(resident() == 48 * MiB);	// no revocation yet: lent at once
	run_ms(100);
	reclaim();				// quick: backs off 1 s
	run_ms(100);
	lend();
	run_ms(800);
	BOOST_TEST(resident() == 32 * MiB);	// held at its share meanwhile ...
	h.check_at_rest();			// ... which is what it is owed now
	run_ms(200);
	BOOST_TEST(resident() == 48 * MiB);	// lent again after the backoff
	reclaim();				// quick again: 2 s
	lend();
	run_ms(1900);
	BOOST_TEST(resident() == 32 * MiB);
	run_ms(150);
	BOOST_TEST(resident() == 48 * MiB);
	reclaim();				// 4 s, capped at 3 s
	lend();
	run_ms(2900);
	BOOST_TEST(resident() == 32 * MiB);
	run_ms(150);
	BOOST_TEST(resident() == 48 * MiB);
	run_ms(3000);				// the lender stays quiet for 3 s ...
	reclaim();				// ... so this revocation relaxes: 3 s halved 3 times
	lend();
	BOOST_TEST(resident() == 48 * MiB);	// lent at once
	h.check_at_rest();
	// Its own allocation evicting from its loan revokes nothing.
	run_ms(100);
	reclaim();				// quick: 1 s
	lend();
	run_ms(1050);
	BOOST_TEST(resident() == 48 * MiB);
	auto own = h.alloc(cb, borrower, 20 * MiB, GOS_PRIO_MAX);	// its older chunks go
	h.pump();
	BOOST_TEST(h.stats(borrower).host == 4 * MiB);
	BOOST_REQUIRE_EQUAL(gos_free(h.eng(), cb, own.buffer), 0);
	h.pump();
	BOOST_TEST(resident() == 48 * MiB);	// returned at once: no backoff
}

// Without the backoff every free lends and every allocation revokes.
BOOST_AUTO_TEST_CASE(without_the_backoff_every_cycle_moves_the_loan)
{
	gos_config cfg = Harness::defaults();
	cfg.lend_backoff_ns = cfg.lend_backoff_max_ns = 0;
	Harness h(cfg);
	h.gpu(64 * MiB);
	auto lender = h.tenant(), borrower = h.tenant();
	auto cl = h.client(), cb = h.client();
	h.alloc(cb, borrower, 48 * MiB);
	for (int i = 0; i < 10; i++) {
		auto r = h.alloc(cl, lender, 32 * MiB);
		h.pump();
		h.advance_ms(100);
		BOOST_REQUIRE_EQUAL(gos_free(h.eng(), cl, r.buffer), 0);
		h.pump();
		h.advance_ms(100);
	}
	BOOST_TEST(h.stats(borrower).bytes_returned == 10 * 16 * MiB);
	gos_config bad = Harness::defaults();
	bad.lend_backoff_max_ns = bad.lend_backoff_ns - 1;
	gos_engine *other = nullptr;
	BOOST_TEST(gos_engine_create(&bad, &other) == -EINVAL);
}

// Issue 24, finding 3: 2^48 - 1 bytes in 64 KiB chunks is 2^32 chunks, which
// a u32 count wrapped to a buffer of none. Refused, and nothing is held.
BOOST_AUTO_TEST_CASE(a_buffer_of_more_chunks_than_its_count_holds_is_refused)
{
	gos_config cfg = Harness::defaults();
	cfg.chunk_size = 64 * 1024;
	Harness h(cfg);
	h.gpu(1 * GiB);
	auto a = h.tenant();
	auto ca = h.client();
	gos_alloc_result r{};
	BOOST_TEST(gos_alloc(h.eng(), ca, a, (1ULL << 48) - 1, 8, 0, &r) == -EFBIG);
	BOOST_TEST(h.stats(a).demand == 0u);
	BOOST_TEST(h.stats(a).buffers == 0u);
	h.check_at_rest();
}

// Where a new buffer's chunks are follows from the reply alone: its first
// device_bytes on the GPU, the next waiting_bytes waiting, the last
// host_bytes on the host. And a SETTLED names the waited range and its
// split, device first. So an agent never asks (gos_buffer_placement).
BOOST_AUTO_TEST_CASE(a_new_buffer_is_laid_out_device_waiting_host_and_settled_says_where_the_waited_range_went)
{
	auto states = [](Harness &h, std::uint32_t cl, std::uint64_t buffer, std::uint64_t size) {
		std::uint32_t n = static_cast<std::uint32_t>((size + 2 * MiB - 1) / (2 * MiB));
		std::vector<std::uint8_t> st(n);
		BOOST_REQUIRE_EQUAL(gos_buffer_placement(h.eng(), cl, buffer, 0, n, st.data()), 0);
		return st;
	};
	// The state the reply implies for each byte range of chunks.
	auto implied = [](const gos_alloc_result &r, std::uint64_t size) {
		std::vector<std::uint8_t> st;
		for (std::uint64_t off = 0; off < size; off += 2 * MiB)
			st.push_back(off < r.device_bytes			  ? GOS_CHUNK_DEVICE
				     : off < r.device_bytes + r.waiting_bytes ? GOS_CHUNK_WAITING
									  : GOS_CHUNK_HOST);
		return st;
	};
	int waited = 0, spilled = 0;
	for (std::uint32_t fairness : {GOS_FAIR_WEIGHTED, GOS_FAIR_FCFS, GOS_FAIR_STATIC})
		for (std::uint64_t seed = 1; seed <= 20; seed++) {
			gos_config cfg = Harness::defaults();
			cfg.fairness = fairness;
			Harness h(cfg, seed);
			h.gpu(64 * MiB);
			auto a = h.tenant(), b = h.tenant();
			auto ca = h.client(), cb = h.client();
			h.alloc(ca, a, (40 + seed) * MiB);
			std::uint64_t size = (20 + 3 * seed) * MiB + (seed % 2) * MiB;	// odd sizes end in a short chunk
			auto r = h.alloc(cb, b, size);
			BOOST_TEST_CONTEXT("fairness " << fairness << " seed " << seed << " size " << size) {
				BOOST_TEST(r.device_bytes + r.waiting_bytes + r.host_bytes == size);
				auto st = states(h, cb, r.buffer, size);
				auto want = implied(r, size);
				BOOST_TEST(st == want, boost::test_tools::per_element());
				waited += r.waiting_bytes > 0;
				spilled += r.host_bytes > 0 && r.device_bytes + r.waiting_bytes > 0;
				if (!r.waiting_bytes)
					continue;
				// Acks only, no ticks: nothing but the settling moves b's chunks meanwhile.
				gos_message settled{};
				for (int i = 0; i < 50 && !settled.kind; i++)
					for (const gos_message &m : h.pump())
						if (m.kind == GOS_MSG_SETTLED && m.buffer == r.buffer)
							settled = m;
				BOOST_REQUIRE(settled.kind == GOS_MSG_SETTLED);
				BOOST_TEST(settled.id == 0u);	// a notice: nothing to acknowledge
				BOOST_TEST(settled.offset == r.device_bytes);
				BOOST_TEST(settled.length == r.waiting_bytes);
				BOOST_TEST(settled.device_bytes + settled.host_bytes == settled.length);
				auto now = states(h, cb, r.buffer, size);
				for (std::uint64_t off = settled.offset; off < settled.offset + settled.length; off += 2 * MiB) {
					std::uint8_t s = now[off / (2 * MiB)];
					if (off < settled.offset + settled.device_bytes)
						BOOST_TEST((s == GOS_CHUNK_DEVICE || s == GOS_CHUNK_EVICTING), "chunk at " << off);
					else
						BOOST_TEST(s == GOS_CHUNK_HOST, "chunk at " << off);
				}
				h.check();
			}
		}
	BOOST_TEST(waited > 0);		// the cases above cover every kind
	BOOST_TEST(spilled > 0);
}
