// Pinning follows PILOT's MAdvise: the data that must live on the host is
// the data used least, and it stops taking turns with the rest.
#include "advice.hpp"

#include <algorithm>
#include <tuple>

#include "settings.hpp"

namespace gos::agent {

int Advice::on_advice(gpuoversub_advice_fn fn, void *ctx)
{
	std::lock_guard g(mu_);
	fn_ = fn;
	ctx_ = ctx;
	return 0;
}

// Priority 0 for the lowest-priority buffers on o's GPU until they cover
// this process's share of the job's excess there; returns the bytes pinned.
std::uint64_t Advice::pin_for(const gos_wire_order &o)
{
	std::uint64_t demand = o.device_bytes + o.host_bytes;
	if (demand <= o.entitlement)
		return 0;
	std::vector<BufferRef> mine;
	std::uint64_t my_bytes = 0, pinned = 0;
	for (const BufferRef &b : registry_.all())
		if (b->evictable() && b->engine_id && static_cast<std::uint32_t>(b->dev) == o.gpu && !b->freed) {
			mine.push_back(b);
			my_bytes += b->size;
			pinned += b->pinned ? b->size : 0;
		}
	if (!my_bytes)
		return 0;
	// This process's part of the excess, in proportion to what it holds.
	auto target = static_cast<std::uint64_t>(static_cast<double>(demand - o.entitlement) *
						 static_cast<double>(my_bytes) / static_cast<double>(demand));
	std::sort(mine.begin(), mine.end(), [](const BufferRef &a, const BufferRef &b) {
		return a->priority != b->priority ? a->priority < b->priority : a->size > b->size;
	});
	for (const BufferRef &b : mine) {
		if (pinned >= target)
			break;
		if (b->pinned)
			continue;
		if (link_.set_priority(*b, 0, b->size, GPUOVERSUB_PRIORITY_MIN))
			continue;	// freed meanwhile, or the engine is gone
		b->pinned = true;
		pinned += b->size;
		pinned_bytes_ += b->size;
	}
	return pinned;
}

void Advice::advise(const gos_wire_order &o)
{
	seen_++;
	gpuoversub_advice a{};
	a.size = sizeof a;
	a.gpu = static_cast<std::int32_t>(o.gpu);
	a.device_bytes = o.device_bytes;
	a.host_bytes = o.host_bytes;
	a.entitlement = o.entitlement;
	a.oversubscribed_ns = o.oversub_ns;
	a.pinned_bytes = pin_for(o);
	std::tie(a.rank, a.local_rank) = ranks_.rank();
	// What the job could still allocate on its other GPUs.
	auto daemon = link_.daemon();
	for (std::uint32_t gpu = 0; daemon && gpu < link_.ngpus() && a.ngpus < GPUOVERSUB_MAX_GPUS; gpu++) {
		gos_rep_meminfo info{};
		if (gpu == o.gpu || daemon->meminfo(gpu, info))
			continue;
		a.headroom[a.ngpus++] = {static_cast<std::int32_t>(gpu), 0, headroom(info)};
	}
	bool room = std::any_of(a.headroom, a.headroom + a.ngpus, [](const gpuoversub_headroom &h) { return h.bytes; });
	a.action = room ? GPUOVERSUB_ACTION_MOVE_WORK : GPUOVERSUB_ACTION_LOWER_PRIORITY;
	a.suggestion = room ? "the job stays above its fair share of this GPU while another of its GPUs has room: "
			      "move work (or data) from this rank to a rank on that GPU"
			    : "the job stays above its fair share of this GPU: lower the priority of data it "
			      "uses rarely, free what it no longer needs, or ask for more GPUs";
	std::lock_guard g(mu_);
	if (fn_) {
		fn_(&a, ctx_);
		return;
	}
	std::string who = a.rank >= 0 ? "rank " + std::to_string(a.rank) + ": " : "";
	warn(who + "GPU " + std::to_string(o.gpu) + " oversubscribed for " +
	     std::to_string(a.oversubscribed_ns / 1000000000) + " s: " + std::to_string(o.device_bytes >> 20) +
	     " MiB on the device, " + std::to_string(o.host_bytes >> 20) + " MiB in host RAM, fair share " +
	     std::to_string(o.entitlement >> 20) + " MiB; " + std::to_string(a.pinned_bytes >> 20) +
	     " MiB of its lowest-priority buffers pinned to host; " + a.suggestion);
}

} // namespace gos::agent
