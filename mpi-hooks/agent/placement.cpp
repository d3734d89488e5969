#include "placement.hpp"

#include <cerrno>

#include "driver.hpp"

namespace gos::agent {

// The agent's stream for lane in ctx, which must be current when it is made.
CUstream Placement::stream_for(CUcontext ctx, unsigned lane)
{
	std::lock_guard g(mu_);
	auto it = streams_.find({ctx, lane});
	if (it != streams_.end())
		return it->second;
	CUstream s = nullptr;
	if (driver().cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
		return nullptr;
	streams_[{ctx, lane}] = s;
	return s;
}

int Placement::wait(CUcontext ctx, unsigned lane)
{
	CUstream s = stream_for(ctx, lane);
	return s && driver().cuStreamSynchronize(s) == CUDA_SUCCESS ? 0 : -EIO;
}

int Placement::place(const Buffer &b, std::uint64_t offset, std::uint64_t length, bool on_device, int numa,
		     unsigned lane, bool dead, Step step)
{
	const Driver &d = driver();
	if (offset >= b.size)
		return -EINVAL;
	length = std::min(length, b.size - offset);
	CUdeviceptr p = b.base + offset;
	// The buffer's context, on whichever thread; the caller's is restored.
	CUcontext was = nullptr;
	d.cuCtxGetCurrent(&was);
	bool pushed = was != b.ctx && d.cuCtxPushCurrent_v2(b.ctx) == CUDA_SUCCESS;
	if (was != b.ctx && !pushed)
		return -EIO;
	int result = move(b, p, length, on_device, numa, lane, dead, step);
	if (pushed) {
		CUcontext popped;
		d.cuCtxPopCurrent_v2(&popped);
	}
	return result;
}

int Placement::move(const Buffer &b, CUdeviceptr p, std::uint64_t length, bool on_device, int numa, unsigned lane,
		    bool dead, Step step)
{
	const Driver &d = driver();
	CUstream s = stream_for(b.ctx, lane);
	if (!s)
		return -EIO;
	CUmemLocation gpu{CU_MEM_LOCATION_TYPE_DEVICE, b.dev};
	CUmemLocation to = on_device ? gpu
			   : numa >= 0 ? CUmemLocation{CU_MEM_LOCATION_TYPE_HOST_NUMA, numa}
				       : CUmemLocation{CU_MEM_LOCATION_TYPE_HOST, 0};
	if (step != Step::prefetch) {
		CUresult r = d.cuMemAdvise_v2(p, length, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, to);
		if (r == CUDA_SUCCESS && !on_device)
			r = d.cuMemAdvise_v2(p, length, CU_MEM_ADVISE_SET_ACCESSED_BY, gpu);
		if (r != CUDA_SUCCESS)
			return -EIO;
	}
	if (step == Step::advise)
		return 0;
	// Dead data need not be copied: discarded and moved in one call where
	// the driver has it and accepts it, else migrated like the rest.
	if (dead && d.cuMemDiscardAndPrefetchBatchAsync) {
		std::size_t size = length, index = 0;
		if (d.cuMemDiscardAndPrefetchBatchAsync(&p, &size, 1, &to, &index, 1, 0, s) == CUDA_SUCCESS)
			return 0;
	}
	return d.cuMemPrefetchAsync_v2(p, length, to, 0, s) == CUDA_SUCCESS ? 0 : -EIO;
}

// Chunks on the device or being evicted stay on the device; the rest go to
// the host.
int Placement::place_as_engine_says(const Buffer &b)
{
	auto engine = link_.engine();
	if (!engine || !b.engine_id)
		return -ENOTCONN;
	std::uint64_t chunk = link_.chunk_size();
	std::uint64_t chunks = (b.size + chunk - 1) / chunk;
	std::vector<std::uint8_t> states;
	int result = 0;
	for (std::uint64_t first = 0; first < chunks; first += GOS_PLACEMENT_MAX) {
		auto count = static_cast<std::uint32_t>(std::min<std::uint64_t>(GOS_PLACEMENT_MAX, chunks - first));
		if (int err = engine->placement(b.engine_id, static_cast<std::uint32_t>(first), count, states))
			return err;
		for (std::uint32_t i = 0; i < count;) {
			bool dev = states[i] == GOS_PLACE_DEVICE || states[i] == GOS_PLACE_EVICTING;
			std::uint32_t j = i + 1;
			while (j < count && (states[j] == GOS_PLACE_DEVICE || states[j] == GOS_PLACE_EVICTING) == dev)
				j++;
			// The application placed its own managed memory; only evictions are ours.
			if (!(dev && b.backing == Backing::app_managed))
				if (int err = place(b, (first + i) * chunk, std::uint64_t(j - i) * chunk, dev, link_.numa()))
					result = err;
			i = j;
		}
	}
	return result;
}

// The device part on the device, like cuMemAlloc, unless the application
// placed its own managed memory (only evictions are ours); the waiting and
// host parts on the host. Deferred (GPUOVERSUB_ALLOC_PREFETCH=deferred),
// the agent's thread prefetches the device part: the prefetch call blocks
// ~330 us per 64 MiB on an H100, but a kernel that touches the buffer
// first populates it on the device by faults, which cost ~2.5% of kernel
// bandwidth there (bench/RESULTS.md). An older engine's reply says where
// the chunks are only when they are all in one place.
bool Placement::place_new(const Buffer &b, const gos_rep_alloc &rep, bool prefetch_now)
{
	std::uint64_t device = std::min<std::uint64_t>(rep.device_bytes, b.size);
	if (!b.evictable())
		return true;
	if (!(rep.layout & GOS_ALLOC_IN_ORDER) && device && device < b.size) {
		place_as_engine_says(b);
		return true;
	}
	if (device < b.size)
		place(b, device, b.size - device, false, link_.numa());
	if (!device || b.backing != Backing::managed)
		return true;
	if (!prefetch_now)
		return false;
	place(b, 0, device, true, -1);
	return true;
}

// [offset, offset + length) waited: its first device_bytes went to the
// device, the rest to the host. An older engine's notice, which names no
// range, is told apart by its split not adding up to it.
void Placement::place_settled(const Buffer &b, const gos_wire_order &o)
{
	bool named = o.device_bytes + o.host_bytes == o.length && o.offset <= b.size && o.length <= b.size - o.offset;
	if (!named) {
		place_as_engine_says(b);
		return;
	}
	if (o.device_bytes && b.backing != Backing::app_managed)
		place(b, o.offset, o.device_bytes, true, -1);
	if (o.host_bytes)
		place(b, o.offset + o.device_bytes, o.host_bytes, false, link_.numa());
}

void Placement::fork_child()
{
	streams_.clear();
	mu_.unlock();
}

} // namespace gos::agent
