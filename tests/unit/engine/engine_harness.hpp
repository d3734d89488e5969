// A C++ harness around the C engine for tests: a simulated clock, agents
// that carry out orders (or refuse them), and byte-size helpers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gos_engine.h"

namespace gos_test {

constexpr std::uint64_t KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024;

// What an agent does with an order it reads.
enum class Reply { ack, fail, ignore };

class Harness {
public:
	explicit Harness(gos_config cfg = defaults(), std::uint64_t seed = 1);
	~Harness();
	Harness(const Harness &) = delete;
	Harness &operator=(const Harness &) = delete;

	static gos_config defaults();

	gos_engine *eng() { return eng_; }
	void advance_ms(std::uint64_t ms) { now_ns_ += ms * 1000000ULL; }
	std::uint64_t now_ns() const { return now_ns_; }

	void gpu(std::uint64_t physical, std::uint32_t id = 0);
	std::uint32_t tenant(std::uint32_t weight = 1, std::uint64_t limit = 0,
			     std::uint32_t gpu = 0);
	std::uint32_t client();
	gos_alloc_result alloc(std::uint32_t client, std::uint32_t tenant,
			       std::uint64_t size,
			       std::uint32_t prio = GOS_PRIO_DEFAULT);

	// Reads every client's messages; orders get `reply`. Returns them all.
	std::vector<gos_message> pump(Reply reply = Reply::ack);
	// Pumps and ticks until nothing more happens (at most `rounds`).
	void settle(int rounds = 200);

	gos_tenant_stats stats(std::uint32_t tenant);
	gos_gpu_stats gpu_stats(std::uint32_t gpu = 0);
	// Fails the current Boost test with the checker's message on violation.
	void check();
	void check_at_rest();
	std::string dump();	// the ledger in figures

	std::map<std::uint32_t, Reply> reply_of;	// per-client override
private:
	static std::uint64_t clock(void *ctx);
	gos_engine *eng_ = nullptr;
	std::uint64_t now_ns_ = 1000000000ULL;
	std::vector<std::uint32_t> clients_, tenants_;
};

} // namespace gos_test
