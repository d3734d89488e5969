// libFuzzer target: bytes as a program of engine calls with arbitrary
// arguments, good and bad. Every call must return 0 or a negative errno,
// and the ledger must pass gos_check() after each one.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <vector>

#include "gos_engine.h"

namespace {

struct Reader {
	const std::uint8_t *p;
	std::size_t left;
	std::uint64_t take(int bytes)
	{
		std::uint64_t v = 0;
		for (int i = 0; i < bytes && left; i++, left--)
			v = v << 8 | *p++;
		return v;
	}
};

std::uint64_t fake_now;
std::uint64_t fake_clock(void *) { return fake_now; }

// Small ids mostly hit real objects; large ones exercise validation.
std::uint32_t some_id(Reader &r, std::uint32_t live)
{
	std::uint32_t v = static_cast<std::uint32_t>(r.take(1));
	return v < 200 ? v % (live + 2) : static_cast<std::uint32_t>(r.take(4));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	Reader r{data, size};
	gos_config cfg;
	gos_config_defaults(&cfg);
	cfg.chunk_size = 64 << 10;
	cfg.fairness = static_cast<std::uint32_t>(r.take(1) % 3);
	cfg.victim = static_cast<std::uint32_t>(r.take(1) % 3);
	cfg.select = static_cast<std::uint32_t>(r.take(1) % 2);
	cfg.order_timeout_ns = 1000000;
	cfg.throttle_persist_ns = r.take(1) % 2 ? 5000000 : 0;
	// A lending backoff short enough to start, double and end within one input.
	cfg.lend_backoff_ns = r.take(1) % 2 ? 20000000 : 0;
	cfg.lend_backoff_max_ns = 4 * cfg.lend_backoff_ns;
	cfg.seed = 1;
	cfg.clock = fake_clock;
	fake_now = 1;
	gos_engine *eng = nullptr;
	if (gos_engine_create(&cfg, &eng))
		std::abort();
	std::uint32_t tenants = 0, clients = 0;
	std::vector<std::uint64_t> buffers, orders;
	char msg[256];
	while (r.left) {
		int err = 0;
		switch (r.take(1) % 12) {
		case 0: err = gos_gpu_add(eng, static_cast<std::uint32_t>(r.take(1) % 3), r.take(3) << 12, r.take(2) << 12); break;
		case 1: {
			std::uint32_t id;
			err = gos_tenant_create(eng, static_cast<std::uint32_t>(r.take(1) % 3), static_cast<std::uint32_t>(r.take(1)), r.take(3) << 12, &id);
			tenants += !err;
			break;
		}
		case 2: {
			std::uint32_t id;
			err = gos_client_create(eng, &id);
			clients += !err;
			break;
		}
		case 3: {
			gos_alloc_result res;
			err = gos_alloc(eng, some_id(r, clients), some_id(r, tenants), r.take(3) << 4,
					static_cast<std::uint32_t>(r.take(1) % 20), static_cast<std::uint32_t>(r.take(1) % 3), &res);
			if (!err)
				buffers.push_back(res.buffer);
			break;
		}
		case 4: {
			std::uint64_t b = buffers.empty() ? r.take(2) : buffers[r.take(1) % buffers.size()];
			err = gos_free(eng, some_id(r, clients), b);
			break;
		}
		case 5: {
			std::uint64_t b = buffers.empty() ? r.take(2) : buffers[r.take(1) % buffers.size()];
			err = gos_set_priority(eng, some_id(r, clients), b, r.take(3), r.take(3), static_cast<std::uint32_t>(r.take(1) % 18));
			break;
		}
		case 6: err = gos_gpu_set_external(eng, static_cast<std::uint32_t>(r.take(1) % 3), r.take(3) << 12); break;
		case 7: {
			gos_message m[8];
			int n = gos_read_messages(eng, some_id(r, clients), m, 8);
			for (int i = 0; i < n; i++)
				if (m[i].id)
					orders.push_back(m[i].id);
			err = n < 0 ? n : 0;
			break;
		}
		case 8: {
			std::uint64_t o = orders.empty() ? r.take(2) : orders[r.take(1) % orders.size()];
			err = r.take(1) % 2 ? gos_order_ack(eng, some_id(r, clients), o) : gos_order_fail(eng, some_id(r, clients), o);
			break;
		}
		case 9: fake_now += r.take(2) * 1000; err = gos_tick(eng); break;
		case 10: err = gos_client_exit(eng, some_id(r, clients)); break;
		case 11: err = gos_tenant_destroy(eng, some_id(r, tenants)); break;
		}
		if (err > 0)
			std::abort();
		if (gos_check(eng, msg, sizeof msg)) {
			std::fprintf(stderr, "invariant violated: %s\n", msg);
			std::abort();
		}
	}
	gos_engine_destroy(eng);
	return 0;
}
