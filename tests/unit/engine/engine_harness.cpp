#include "engine_harness.hpp"

#include <boost/test/unit_test.hpp>
#include <sstream>

namespace gos_test {

gos_config Harness::defaults()
{
	gos_config cfg;
	gos_config_defaults(&cfg);
	cfg.throttle_persist_ns = 0;
	cfg.return_batch_bytes = 0;
	return cfg;
}

Harness::Harness(gos_config cfg, std::uint64_t seed)
{
	cfg.seed = seed;
	cfg.clock = &Harness::clock;
	cfg.clock_ctx = this;
	BOOST_REQUIRE_EQUAL(gos_engine_create(&cfg, &eng_), 0);
}

Harness::~Harness()
{
	gos_engine_destroy(eng_);
}

std::uint64_t Harness::clock(void *ctx)
{
	return static_cast<Harness *>(ctx)->now_ns_;
}

void Harness::gpu(std::uint64_t physical, std::uint32_t id)
{
	BOOST_REQUIRE_EQUAL(gos_gpu_add(eng_, id, physical, 0), 0);
}

std::uint32_t Harness::tenant(std::uint32_t weight, std::uint64_t limit,
			      std::uint32_t gpu)
{
	std::uint32_t id = 0;
	BOOST_REQUIRE_EQUAL(gos_tenant_create(eng_, gpu, weight, limit, &id), 0);
	tenants_.push_back(id);
	return id;
}

std::uint32_t Harness::client()
{
	std::uint32_t id = 0;
	BOOST_REQUIRE_EQUAL(gos_client_create(eng_, &id), 0);
	clients_.push_back(id);
	return id;
}

gos_alloc_result Harness::alloc(std::uint32_t client, std::uint32_t tenant,
				std::uint64_t size, std::uint32_t prio)
{
	gos_alloc_result res{};
	BOOST_REQUIRE_EQUAL(gos_alloc(eng_, client, tenant, size, prio, 0, &res), 0);
	BOOST_REQUIRE_EQUAL(res.device_bytes + res.host_bytes + res.waiting_bytes, size);
	return res;
}

std::vector<gos_message> Harness::pump(Reply reply)
{
	std::vector<gos_message> all;
	for (bool more = true; more;) {
		more = false;
		for (std::uint32_t cl : clients_) {
			gos_message msgs[64];
			int n = gos_read_messages(eng_, cl, msgs, 64);
			if (n < 0)
				continue;	// exited client
			for (int i = 0; i < n; i++) {
				all.push_back(msgs[i]);
				more = true;
				if (!msgs[i].id)
					continue;
				auto it = reply_of.find(cl);
				Reply r = it == reply_of.end() ? reply : it->second;
				// -ENOENT: an order that expired unread, or one the engine
				// sent already expired (a forfeit: orders.c), as agents see.
				int err = 0;
				if (r == Reply::ack)
					err = gos_order_ack(eng_, cl, msgs[i].id);
				else if (r == Reply::fail)
					err = gos_order_fail(eng_, cl, msgs[i].id);
				BOOST_REQUIRE(err == 0 || err == -ENOENT);
			}
		}
	}
	return all;
}

void Harness::settle(int rounds)
{
	for (int i = 0; i < rounds; i++) {
		bool quiet = pump().empty();
		gos_tick(eng_);
		if (quiet && gpu_stats().outstanding_orders == 0 && pump().empty())
			return;
		advance_ms(50);
	}
	BOOST_FAIL("engine did not come to rest");
}

gos_tenant_stats Harness::stats(std::uint32_t tenant)
{
	gos_tenant_stats st{};
	BOOST_REQUIRE_EQUAL(gos_tenant_get_stats(eng_, tenant, &st), 0);
	return st;
}

gos_gpu_stats Harness::gpu_stats(std::uint32_t gpu)
{
	gos_gpu_stats st{};
	BOOST_REQUIRE_EQUAL(gos_gpu_get_stats(eng_, gpu, &st), 0);
	return st;
}

// The ledger in figures, printed with any violation.
std::string Harness::dump()
{
	std::ostringstream os;
	gos_gpu_stats g{};
	gos_gpu_get_stats(eng_, 0, &g);
	os << "\n  gpu0 capacity=" << g.capacity << " used=" << g.used << " evicting=" << g.evicting
	   << " waiting=" << g.waiting << " orders=" << g.outstanding_orders;
	for (std::uint32_t t : tenants_) {
		gos_tenant_stats st{};
		if (gos_tenant_get_stats(eng_, t, &st))
			continue;
		os << "\n  tenant " << t << " w=" << st.weight << " demand=" << st.demand
		   << " ent=" << st.entitlement << " resident=" << st.resident << " host=" << st.host
		   << " unevictable=" << st.unevictable << " throttled=" << st.throttled;
	}
	return os.str();
}

void Harness::check()
{
	char msg[256] = "";
	int err = gos_check(eng_, msg, sizeof msg);
	BOOST_REQUIRE_MESSAGE(err == 0, "invariant violated: " << msg << dump());
}

void Harness::check_at_rest()
{
	char msg[256] = "";
	check();
	int err = gos_check_at_rest(eng_, msg, sizeof msg);
	BOOST_REQUIRE_MESSAGE(err == 0, "at-rest invariant violated: " << msg << dump());
}

} // namespace gos_test
