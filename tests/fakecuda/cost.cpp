#include "cost.hpp"

#include <sys/prctl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>

namespace fakecuda {
namespace {

struct Cost {
	double call_us = 0, per_mib_us = 0;
};

struct Model {
	Cost of[3];
	bool any = false;
};

// "name=CALL+PER_MIB" items separated by commas; a malformed item is
// reported and costs nothing.
Model load()
{
	Model m;
	const char *v = std::getenv("FAKECUDA_COST");
	if (!v)
		return m;
	static const char *const names[3] = {"advise", "prefetch", "discard"};
	std::string spec(v);
	for (std::size_t at = 0; at < spec.size();) {
		std::size_t end = spec.find(',', at);
		std::string item = spec.substr(at, end == std::string::npos ? std::string::npos : end - at);
		at = end == std::string::npos ? spec.size() : end + 1;
		char name[16];
		double call, per_mib;
		int i = 0;
		if (std::sscanf(item.c_str(), "%15[a-z]=%lf+%lf", name, &call, &per_mib) == 3)
			while (i < 3 && std::strcmp(name, names[i]))
				i++;
		else
			i = 3;
		if (i == 3 || call < 0 || per_mib < 0) {
			std::fprintf(stderr, "fakecuda: FAKECUDA_COST item '%s' is not NAME=US+US_PER_MIB with NAME "
					     "advise, prefetch or discard; ignored\n", item.c_str());
			continue;
		}
		m.of[i] = {call, per_mib};
		m.any = true;
	}
	return m;
}

const Model &model()
{
	static const Model m = load();
	return m;
}

std::shared_mutex va_space;

} // namespace

void pay(Op op, std::uint64_t bytes)
{
	const Model &m = model();
	if (!m.any)
		return;
	// Sleeps as long as modelled, not the kernel's default 50 us longer.
	static thread_local bool precise = prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL) == 0;
	(void)precise;
	const Cost &c = m.of[static_cast<int>(op)];
	auto us = c.call_us + c.per_mib_us * static_cast<double>(bytes) / (1 << 20);
	auto take = std::chrono::duration<double, std::micro>(us);
	if (op == Op::advise) {
		std::unique_lock w(va_space);
		std::this_thread::sleep_for(take);
	} else {
		std::shared_lock r(va_space);
		std::this_thread::sleep_for(take);
	}
}

} // namespace fakecuda
