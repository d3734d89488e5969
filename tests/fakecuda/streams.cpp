// Stream order and capture. Sources of the rules: cuda.h of CUDA 13.0
// (documented), NVIDIA's CUDA Graphs guide, "Constraints"
// (docs.nvidia.com/dl-cuda-graph/cuda-graph-basics/constraints.html,
// documented); none has been measured on a GPU here yet.
#include "streams.hpp"

#include <pthread.h>

#include <condition_variable>
#include <map>
#include <mutex>

namespace fakecuda {

struct StreamState {
	std::uint64_t submitted = 0, done = 0;
	bool paused = false;
	// Capture (cuStreamBeginCapture): operations are recorded, not run.
	bool capturing = false, invalidated = false;
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
	pthread_t owner{};
	std::vector<std::uint64_t> allocations;
};

namespace {

std::mutex mu;
std::condition_variable progressed;
std::map<CUstream, StreamRef> streams;	// created ones, by handle
StreamRef special = std::make_shared<StreamState>();
// cuThreadExchangeStreamCaptureMode: each thread's mode, GLOBAL by default
// (documented).
thread_local CUstreamCaptureMode thread_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;

bool is_special(CUstream s) { return !s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD; }

} // namespace

CUstream stream_create()
{
	auto s = std::make_shared<StreamState>();
	auto handle = reinterpret_cast<CUstream>(s.get());
	std::lock_guard g(mu);
	streams[handle] = s;
	return handle;
}

// Work still pending completes after the handle is gone (documented:
// cuStreamDestroy returns at once and the device finishes the stream).
int stream_destroy(CUstream s)
{
	std::lock_guard g(mu);
	auto it = streams.find(s);
	if (it == streams.end())
		return CUDA_ERROR_INVALID_HANDLE;
	it->second->paused = false;
	it->second->done = it->second->submitted;
	streams.erase(it);
	progressed.notify_all();
	return CUDA_SUCCESS;
}

StreamRef stream_of(CUstream s)
{
	if (is_special(s))
		return special;
	std::lock_guard g(mu);
	auto it = streams.find(s);
	return it == streams.end() ? nullptr : it->second;
}

StreamPoint enqueue(const StreamRef &s)
{
	std::lock_guard g(mu);
	s->submitted++;
	if (!s->paused)
		s->done = s->submitted;
	return {s, s->submitted};
}

bool reached(const StreamPoint &p)
{
	std::lock_guard g(mu);
	return !p.stream || p.stream->done >= p.pos;
}

void wait_reached(const StreamPoint &p)
{
	std::unique_lock g(mu);
	progressed.wait(g, [&] { return !p.stream || p.stream->done >= p.pos; });
}

bool idle(const StreamRef &s)
{
	std::lock_guard g(mu);
	return s->done == s->submitted;
}

void wait_idle(const StreamRef &s)
{
	std::unique_lock g(mu);
	progressed.wait(g, [&] { return s->done == s->submitted; });
}

void wait_all_idle()
{
	std::unique_lock g(mu);
	progressed.wait(g, [] {
		for (auto &[h, s] : streams)
			if (s->done != s->submitted)
				return false;
		return true;
	});
}

void pause(const StreamRef &s, bool paused)
{
	std::lock_guard g(mu);
	s->paused = paused;
	if (!paused)
		s->done = s->submitted;
	progressed.notify_all();
}

// Documented: capture may not start on the legacy stream, nor on a stream
// already capturing (CUDA_ERROR_INVALID_VALUE, the only error listed).
int begin_capture(const StreamRef &s, CUstreamCaptureMode mode)
{
	std::lock_guard g(mu);
	if (s == special || s->capturing)
		return CUDA_ERROR_INVALID_VALUE;
	s->capturing = true;
	s->invalidated = false;
	s->mode = mode;
	s->owner = pthread_self();
	s->allocations.clear();
	return CUDA_SUCCESS;
}

// Documented: a capture not begun RELAXED ends on its own thread
// (CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD); an invalidated capture yields
// no graph. That it then returns CUDA_ERROR_STREAM_CAPTURE_INVALIDATED is
// that error's documented meaning, not a listed return of the call.
int end_capture(const StreamRef &s, std::vector<std::uint64_t> &allocations)
{
	std::lock_guard g(mu);
	if (!s->capturing)
		return CUDA_ERROR_INVALID_VALUE;
	if (s->mode != CU_STREAM_CAPTURE_MODE_RELAXED && !pthread_equal(s->owner, pthread_self()))
		return CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
	s->capturing = false;
	allocations.swap(s->allocations);
	s->allocations.clear();
	return s->invalidated ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED : CUDA_SUCCESS;
}

CUstreamCaptureStatus capture_status(const StreamRef &s)
{
	std::lock_guard g(mu);
	return !s->capturing	 ? CU_STREAM_CAPTURE_STATUS_NONE
	       : s->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
				: CU_STREAM_CAPTURE_STATUS_ACTIVE;
}

// Documented in the CUDA Graphs guide: synchronizing (or querying) a
// capturing stream is forbidden, since its work does not run.
int uncapturable(const StreamRef &s)
{
	std::lock_guard g(mu);
	if (!s->capturing)
		return CUDA_SUCCESS;
	s->invalidated = true;
	return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

void capture_allocation(const StreamRef &s, std::uint64_t ptr)
{
	std::lock_guard g(mu);
	s->allocations.push_back(ptr);
}

CUstreamCaptureMode exchange_mode(CUstreamCaptureMode mode)
{
	std::swap(mode, thread_mode);
	return mode;
}

// Documented (cuThreadExchangeStreamCaptureMode): a thread in GLOBAL mode
// may make no potentially unsafe call while it has a capture of its own not
// begun RELAXED or another thread has one begun GLOBAL; in THREAD_LOCAL
// mode only its own captures count; in RELAXED mode nothing does. The
// violation invalidates the capture (documented for cuStreamEndCapture);
// the call fails with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, that error's
// documented meaning. Which calls are potentially unsafe is listed nowhere:
// the fake takes cuda.h's example, cudaMalloc, for the whole synchronous
// allocation family and cuMemFree, and the CUDA Graphs guide's synchronous
// copies and device synchronization (driver.cpp, memory_api.cpp).
int unsafe_call()
{
	if (thread_mode == CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_SUCCESS;
	std::lock_guard g(mu);
	bool forbidden = false;
	for (auto &[h, s] : streams) {
		if (!s->capturing || s->mode == CU_STREAM_CAPTURE_MODE_RELAXED)
			continue;
		bool mine = pthread_equal(s->owner, pthread_self());
		if (mine || (thread_mode == CU_STREAM_CAPTURE_MODE_GLOBAL && s->mode == CU_STREAM_CAPTURE_MODE_GLOBAL)) {
			s->invalidated = true;
			forbidden = true;
		}
	}
	return forbidden ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

} // namespace fakecuda
