// Property tests: many random operation sequences against the engine, with
// the ledger's invariants checked after every step and the at-rest
// invariants (utilization, fairness, placement agreed with the agents) at
// the end of each sequence.
//
//   GOS_PROPERTY_SEQUENCES=N   how many sequences (default 10000)
//   GOS_PROPERTY_SEED=S        replay only sequence S
#define BOOST_TEST_MODULE engine_property
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <random>
#include <vector>

#include "engine_harness.hpp"

using namespace gos_test;

namespace {

enum class Mood { prompt, refuses, sluggish };

struct Agent {
	std::uint32_t id;
	Mood mood;
	std::vector<gos_message> deferred;	// orders read but not yet carried out
};

struct Buffer {
	std::uint32_t client;
	std::uint64_t size;
	std::vector<bool> host;	// per chunk: what the agent believes is on the host
	bool unevictable;
	std::uint32_t tenant;
};

class Sequence {
public:
	explicit Sequence(std::uint64_t seed) : rng_(seed), h_(config(seed), seed) {}

	void run(int steps);

private:
	gos_config config(std::uint64_t seed);
	std::uint64_t pick(std::uint64_t n) { return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng_); }
	bool chance(int percent) { return pick(100) < static_cast<std::uint64_t>(percent); }

	void new_agent();
	void step();
	void op_alloc();
	void op_free();
	void op_prio();
	void op_exit();
	void deliver(Agent &a);
	void carry_out(Agent &a, const gos_message &m, bool ok);
	void resync(const Agent &a);
	void finish();
	void check_placement();
	std::uint64_t chunk_bytes(const Buffer &b, std::uint32_t i) const;
	// Believes bytes [offset, offset + length) of b on the host, or not:
	// placing a range where it is already is idempotent, as the agent's is.
	void believe(Buffer &b, std::uint64_t offset, std::uint64_t length, bool host) const;

	std::mt19937_64 rng_;
	gos_config cfg_{};
	Harness h_;
	std::uint64_t physical_ = 0;
	std::vector<std::uint32_t> tenants_;
	std::map<std::uint32_t, std::uint32_t> max_buffers_;	// tenant -> its cap, if it has one
	std::vector<Agent> agents_;
	std::map<std::uint64_t, Buffer> buffers_;
	std::uint64_t last_op_ = 0;
};

gos_config Sequence::config(std::uint64_t seed)
{
	std::mt19937_64 r(seed ^ 0x5bd1e995);
	cfg_ = Harness::defaults();
	cfg_.chunk_size = 64 * KiB;
	// Mostly the product policy; baselines keep the ledger invariants too.
	std::uint32_t mode = r() % 10;
	cfg_.fairness = mode < 7 ? GOS_FAIR_WEIGHTED : mode < 8 ? GOS_FAIR_FCFS : GOS_FAIR_STATIC;
	cfg_.victim = mode == 9 ? GOS_VICTIM_LRU : r() % 4 ? GOS_VICTIM_EXCESS : GOS_VICTIM_RESIDENT;
	if (cfg_.fairness == GOS_FAIR_STATIC)
		cfg_.victim = GOS_VICTIM_EXCESS;
	cfg_.select = r() % 4 ? GOS_SELECT_PRIORITY : GOS_SELECT_RANDOM;
	cfg_.order_timeout_ns = 100 * 1000000ULL;
	cfg_.throttle_persist_ns = r() % 2 ? 300 * 1000000ULL : 0;
	cfg_.return_batch_bytes = r() % 2 ? 256 * KiB : 0;
	return cfg_;
}

void Sequence::new_agent()
{
	int roll = static_cast<int>(pick(100));
	Mood mood = roll < 70 ? Mood::prompt : roll < 80 ? Mood::refuses : Mood::sluggish;
	agents_.push_back(Agent{h_.client(), mood, {}});
}

void Sequence::run(int steps)
{
	physical_ = (1 + pick(4)) * MiB;
	h_.gpu(physical_);
	int ntenants = 1 + static_cast<int>(pick(5));
	for (int i = 0; i < ntenants; i++) {
		tenants_.push_back(h_.tenant(1 + static_cast<std::uint32_t>(pick(4))));
		if (chance(30))	// minimum shares, sometimes promising too much
			BOOST_REQUIRE_EQUAL(gos_tenant_set_min(h_.eng(), tenants_.back(), pick(physical_)), 0);
		if (chance(30)) {	// a cap on buffers, small enough to be reached
			max_buffers_[tenants_.back()] = 1 + static_cast<std::uint32_t>(pick(4));
			BOOST_REQUIRE_EQUAL(gos_tenant_set_max_buffers(h_.eng(), tenants_.back(), max_buffers_[tenants_.back()]), 0);
		}
	}
	int nagents = 1 + static_cast<int>(pick(6));
	for (int i = 0; i < nagents; i++)
		new_agent();
	for (int i = 0; i < steps; i++) {
		BOOST_TEST_CONTEXT("step " << i << " of a sequence with fairness " << cfg_.fairness
				   << ", victim " << cfg_.victim << ", select " << cfg_.select) {
			step();
			BOOST_TEST_INFO("last operation " << last_op_);
			h_.check();
		}
	}
	finish();
}

void Sequence::step()
{
	last_op_ = pick(10);
	switch (last_op_) {
	case 0: case 1: case 2:
		op_alloc();
		break;
	case 3:
		op_free();
		break;
	case 4:
		op_prio();
		break;
	case 5: {
		std::uint64_t external = pick(physical_ / 2);
		BOOST_REQUIRE_EQUAL(gos_gpu_set_external(h_.eng(), 0, external), 0);
		break;
	}
	case 6:
		if (chance(30))
			op_exit();
		break;
	case 7:
		h_.advance_ms(10 + pick(150));	// long enough for timeouts
		BOOST_REQUIRE_EQUAL(gos_tick(h_.eng()), 0);
		break;
	default:
		deliver(agents_[pick(agents_.size())]);
	}
}

void Sequence::op_alloc()
{
	Agent &a = agents_[pick(agents_.size())];
	std::uint32_t t = tenants_[pick(tenants_.size())];
	std::uint64_t size = 1 + pick(physical_ / 2);
	bool unevictable = chance(10);
	gos_alloc_result res{};
	int err = gos_alloc(h_.eng(), a.id, t, size, static_cast<std::uint32_t>(pick(GOS_NPRIO)),
			    unevictable ? GOS_ALLOC_UNEVICTABLE : 0, &res);
	auto held = std::count_if(buffers_.begin(), buffers_.end(), [t](auto &kv) { return kv.second.tenant == t; });
	bool at_cap = max_buffers_.count(t) && held >= max_buffers_[t];
	BOOST_REQUIRE_EQUAL(err == -ENOBUFS, at_cap);	// refused exactly at the cap
	if (at_cap || (unevictable && err == -ENOSPC))
		return;	// refused, nothing held
	BOOST_REQUIRE_EQUAL(err, 0);
	BOOST_REQUIRE_EQUAL(res.device_bytes + res.host_bytes + res.waiting_bytes, size);
	Buffer b{a.id, size, {}, unevictable, t};
	b.host.resize(unevictable ? 0 : (size + cfg_.chunk_size - 1) / cfg_.chunk_size);
	believe(b, size - res.host_bytes, res.host_bytes, true);	// the last host_bytes (alloc.c)
	buffers_[res.buffer] = b;
}

void Sequence::op_free()
{
	if (buffers_.empty())
		return;
	auto it = std::next(buffers_.begin(), static_cast<long>(pick(buffers_.size())));
	BOOST_REQUIRE_EQUAL(gos_free(h_.eng(), it->second.client, it->first), 0);
	buffers_.erase(it);
}

void Sequence::op_prio()
{
	if (buffers_.empty())
		return;
	auto it = std::next(buffers_.begin(), static_cast<long>(pick(buffers_.size())));
	std::uint64_t off = pick(it->second.size);
	std::uint64_t len = 1 + pick(it->second.size - off);
	BOOST_REQUIRE_EQUAL(gos_set_priority(h_.eng(), it->second.client, it->first, off, len,
					     static_cast<std::uint32_t>(pick(GOS_NPRIO))), 0);
}

// kill -9 of a process: the engine forgets it; a new process takes its place.
void Sequence::op_exit()
{
	std::size_t i = pick(agents_.size());
	std::uint32_t id = agents_[i].id;
	BOOST_REQUIRE_EQUAL(gos_client_exit(h_.eng(), id), 0);
	std::erase_if(buffers_, [id](auto &kv) { return kv.second.client == id; });
	agents_.erase(agents_.begin() + static_cast<long>(i));
	new_agent();
}

// The agent moves the data, then tells the engine; a refused ack means the
// order expired or its buffer went away: the engine decided without the
// agent, which puts every buffer back where the engine says, as the real
// agent does (mpi-hooks/agent/executor.cpp).
void Sequence::carry_out(Agent &a, const gos_message &m, bool ok)
{
	int err = ok ? gos_order_ack(h_.eng(), a.id, m.id) : gos_order_fail(h_.eng(), a.id, m.id);
	if (err == -ENOENT) {
		resync(a);
		return;
	}
	BOOST_REQUIRE_EQUAL(err, 0);
	auto buf = buffers_.find(m.buffer);
	if (ok && buf != buffers_.end())
		believe(buf->second, m.offset, m.length, m.kind == GOS_MSG_EVICT);
}

// What the agent believes on the host becomes the engine's HOST chunks, and
// its RETURNING ones, whose acks will take them back; EVICTING chunks count
// on the device until their acks, WAITING ones until SETTLED.
void Sequence::resync(const Agent &a)
{
	for (auto &[id, b] : buffers_) {
		if (b.client != a.id || b.unevictable)
			continue;
		std::uint32_t n = static_cast<std::uint32_t>((b.size + cfg_.chunk_size - 1) / cfg_.chunk_size);
		std::vector<std::uint8_t> st(n);
		BOOST_REQUIRE_EQUAL(gos_buffer_placement(h_.eng(), b.client, id, 0, n, st.data()), 0);
		for (std::uint32_t i = 0; i < n; i++)
			b.host[i] = st[i] == GOS_CHUNK_HOST || st[i] == GOS_CHUNK_RETURNING;
	}
}

void Sequence::deliver(Agent &a)
{
	gos_message msgs[32];
	int n = gos_read_messages(h_.eng(), a.id, msgs, 32);
	BOOST_REQUIRE_GE(n, 0);
	for (int i = 0; i < n; i++) {
		const gos_message &m = msgs[i];
		if (m.kind == GOS_MSG_SETTLED) {
			// A notice may outlive its buffer, like any message in flight.
			auto buf = buffers_.find(m.buffer);
			// Only its host part: a chunk of the range that reached the
			// device before the rest may have been evicted since, by an
			// order read before this notice.
			if (buf != buffers_.end())
				believe(buf->second, m.offset + m.device_bytes, m.host_bytes, true);
			continue;
		}
		if (!m.id)
			continue;
		if (a.mood == Mood::sluggish && !chance(30))
			a.deferred.push_back(m);
		else
			carry_out(a, m, a.mood != Mood::refuses || chance(50));
	}
	// A sluggish agent catches up on some older orders, maybe too late.
	for (std::size_t i = 0; i < a.deferred.size();) {
		if (!chance(40)) {
			i++;
			continue;
		}
		gos_message m = a.deferred[i];
		a.deferred.erase(a.deferred.begin() + static_cast<long>(i));
		carry_out(a, m, true);
	}
}

void Sequence::believe(Buffer &b, std::uint64_t offset, std::uint64_t length, bool host) const
{
	for (std::uint64_t at = offset; at < offset + length && at < b.size; at += cfg_.chunk_size)
		b.host[at / cfg_.chunk_size] = host;
}

std::uint64_t Sequence::chunk_bytes(const Buffer &b, std::uint32_t i) const
{
	std::uint64_t start = static_cast<std::uint64_t>(i) * cfg_.chunk_size;
	return std::min<std::uint64_t>(cfg_.chunk_size, b.size - start);
}

void Sequence::finish()
{
	for (auto &a : agents_) {
		a.mood = Mood::prompt;
		for (const gos_message &m : a.deferred)
			carry_out(a, m, true);
		a.deferred.clear();
	}
	for (int round = 0;; round++) {
		if (round >= 1995)
			BOOST_TEST_MESSAGE("round " << round << h_.dump());
		BOOST_REQUIRE_MESSAGE(round < 2000, "engine did not come to rest (fairness "
				      << cfg_.fairness << ", victim " << cfg_.victim << ")" << h_.dump());
		for (auto &a : agents_)
			deliver(a);
		h_.advance_ms(50);
		BOOST_REQUIRE_EQUAL(gos_tick(h_.eng()), 0);
		if (h_.gpu_stats().outstanding_orders == 0 && round > 3)
			break;
	}
	for (auto &a : agents_)
		deliver(a);	// notices from the last tick
	BOOST_TEST_CONTEXT("at rest, fairness " << cfg_.fairness << ", victim " << cfg_.victim) {
		h_.check_at_rest();
		check_placement();
	}
}

// What every agent believes about its buffers matches the engine's ledger.
void Sequence::check_placement()
{
	for (auto &[id, b] : buffers_) {
		if (b.unevictable)
			continue;
		std::uint32_t n = static_cast<std::uint32_t>((b.size + cfg_.chunk_size - 1) / cfg_.chunk_size);
		std::vector<std::uint8_t> st(n);
		BOOST_REQUIRE_EQUAL(gos_buffer_placement(h_.eng(), b.client, id, 0, n, st.data()), 0);
		std::uint64_t host = 0, believed = 0;
		for (std::uint32_t i = 0; i < n; i++) {
			BOOST_REQUIRE(st[i] == GOS_CHUNK_DEVICE || st[i] == GOS_CHUNK_HOST);
			if (st[i] == GOS_CHUNK_HOST)
				host += chunk_bytes(b, i);
			if (b.host[i])
				believed += chunk_bytes(b, i);
			BOOST_REQUIRE_MESSAGE((st[i] == GOS_CHUNK_HOST) == b.host[i], "buffer " << id << " chunk " << i
					      << ": the engine and the agent disagree");
		}
		BOOST_REQUIRE_MESSAGE(host == believed, "buffer " << id << ": engine has " << host
				      << " host bytes, agent believes " << believed << " (fairness "
				      << cfg_.fairness << ", victim " << cfg_.victim << ")");
	}
}

std::uint64_t env_u64(const char *name, std::uint64_t fallback)
{
	const char *v = std::getenv(name);
	return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

} // namespace

BOOST_AUTO_TEST_CASE(random_sequences_keep_every_invariant)
{
	std::uint64_t only = env_u64("GOS_PROPERTY_SEED", 0);
	std::uint64_t count = env_u64("GOS_PROPERTY_SEQUENCES", 10000);
	std::uint64_t first = only ? only : 1, last = only ? only : count;
	for (std::uint64_t seed = first; seed <= last; seed++) {
		// Every check is fatal, so the context names the failing seed.
		BOOST_TEST_CONTEXT("replay with GOS_PROPERTY_SEED=" << seed) {
			Sequence(seed).run(60);
		}
	}
	BOOST_TEST_MESSAGE("sequences run: " << (last - first + 1));
}
