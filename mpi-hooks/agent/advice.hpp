// Advice from the engine: the job stays above its fair share of a GPU.
// The agent pins this process's lowest-priority buffers covering its part
// of the excess, then hands the application a record (its callback), or
// prints one line per episode.
//
// Lock: mu_ guards the application's callback and is held while it runs,
// so that once gpuoversub_on_advice returns the callback it replaced is
// never called again. It comes first in the agent's lock order: the
// callback may call the rest of the public API, though not
// gpuoversub_on_advice itself. Not held across fork(): a callback may fork.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include <gpuoversub/gpuoversub.h>

#include "link.hpp"
#include "ranks.hpp"
#include "registry.hpp"

namespace gos::agent {

class Advice {
public:
	Advice(const Registry &registry, Link &link, const RankFacts &ranks)
		: registry_(registry), link_(link), ranks_(ranks)
	{
	}

	int on_advice(gpuoversub_advice_fn fn, void *ctx);
	void advise(const gos_wire_order &o);	// on the agent's thread
	std::uint64_t seen() const { return seen_; }
	std::uint64_t pinned_bytes() const { return pinned_bytes_; }

private:
	std::uint64_t pin_for(const gos_wire_order &o);

	const Registry &registry_;
	Link &link_;
	const RankFacts &ranks_;
	std::atomic<std::uint64_t> seen_{0}, pinned_bytes_{0};
	std::mutex mu_;
	gpuoversub_advice_fn fn_ = nullptr;
	void *ctx_ = nullptr;
};

} // namespace gos::agent
