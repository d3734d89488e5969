// The fake driver's streams, events, stream capture and graphs: entry
// points over streams.cpp, whose comments say where each rule comes from.
// Synchronizing also lets memory pools give back what they hold beyond
// their release threshold (pools.cpp).
#include <vector>

#include "fake_api.hpp"
#include "pools.hpp"
#include "streams.hpp"

using namespace fakecuda;

namespace {

struct Event {
	StreamPoint at;
	bool captured = false;	// last recorded inside a capture
};

// What a capture produced; the fake never launches graphs.
struct Graph {
	std::vector<std::uint64_t> allocations;
};

Event *event_of(CUevent e) { return reinterpret_cast<Event *>(e); }

} // namespace

FAKE_API CUresult cuStreamCreate(CUstream *s, unsigned int)
{
	int dev;
	if (!s)
		return CUDA_ERROR_INVALID_VALUE;
	if (int err = current_device(dev))
		return result(err);
	*s = stream_create();
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuStreamDestroy_v2(CUstream s) { return result(stream_destroy(s)); }

FAKE_API CUresult cuStreamSynchronize(CUstream s)
{
	StreamRef st = stream_of(s);
	if (!st)
		return CUDA_ERROR_INVALID_HANDLE;
	if (int err = uncapturable(st))
		return result(err);
	wait_idle(st);
	pools_release_at_sync();
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuStreamQuery(CUstream s)
{
	StreamRef st = stream_of(s);
	if (!st)
		return CUDA_ERROR_INVALID_HANDLE;
	if (int err = uncapturable(st))
		return result(err);
	return idle(st) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

// The fake keeps no order across streams: waiting on an event only checks
// its arguments.
FAKE_API CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags)
{
	return stream_of(s) && e && !flags ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE_API CUresult cuCtxSynchronize()
{
	int dev;
	if (int err = current_device(dev))
		return result(err);
	if (int err = unsafe_call())	// the CUDA Graphs guide: no device synchronization in capture
		return result(err);
	wait_all_idle();
	pools_release_at_sync();
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st)
{
	StreamRef ref = stream_of(s);
	if (!st)
		return CUDA_ERROR_INVALID_VALUE;
	if (!ref)
		return CUDA_ERROR_INVALID_HANDLE;
	*st = capture_status(ref);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuStreamIsCapturing_ptsz(CUstream s, CUstreamCaptureStatus *st) { return cuStreamIsCapturing(s, st); }

FAKE_API CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode)
{
	StreamRef st = stream_of(s);
	if (!st)
		return CUDA_ERROR_INVALID_HANDLE;
	return result(begin_capture(st, mode));
}

FAKE_API CUresult cuStreamBeginCapture_v2_ptsz(CUstream s, CUstreamCaptureMode mode)
{
	return cuStreamBeginCapture_v2(s, mode);
}

FAKE_API CUresult cuStreamEndCapture(CUstream s, CUgraph *graph)
{
	StreamRef st = stream_of(s);
	if (!graph)
		return CUDA_ERROR_INVALID_VALUE;
	if (!st)
		return CUDA_ERROR_INVALID_HANDLE;
	*graph = nullptr;
	auto *g = new Graph;
	int err = end_capture(st, g->allocations);
	if (err)
		delete g;
	else
		*graph = reinterpret_cast<CUgraph>(g);
	return result(err);
}

FAKE_API CUresult cuStreamEndCapture_ptsz(CUstream s, CUgraph *graph) { return cuStreamEndCapture(s, graph); }

FAKE_API CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
	if (!mode)
		return CUDA_ERROR_INVALID_VALUE;
	*mode = exchange_mode(*mode);
	return CUDA_SUCCESS;
}

// Documented: a graph's allocations outlive it until they are freed.
FAKE_API CUresult cuGraphDestroy(CUgraph g)
{
	if (!g)
		return CUDA_ERROR_INVALID_VALUE;
	delete reinterpret_cast<Graph *>(g);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuEventCreate(CUevent *e, unsigned int)
{
	if (!e)
		return CUDA_ERROR_INVALID_VALUE;
	*e = reinterpret_cast<CUevent>(new Event);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuEventRecord(CUevent e, CUstream s)
{
	StreamRef st = stream_of(s);
	if (!e || !st)
		return CUDA_ERROR_INVALID_HANDLE;
	Event *ev = event_of(e);
	ev->captured = capture_status(st) != CU_STREAM_CAPTURE_STATUS_NONE;
	if (!ev->captured)
		ev->at = enqueue(st);
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuEventRecord_ptsz(CUevent e, CUstream s) { return cuEventRecord(e, s); }

// Documented: an event last recorded in a capture may not be queried or
// waited for (cuThreadExchangeStreamCaptureMode's example), which
// CUDA_ERROR_CAPTURED_EVENT names. Whether that also invalidates the
// capture is not documented; the fake leaves the capture alone.
FAKE_API CUresult cuEventQuery(CUevent e)
{
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	if (event_of(e)->captured)
		return CUDA_ERROR_CAPTURED_EVENT;
	return reached(event_of(e)->at) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

FAKE_API CUresult cuEventSynchronize(CUevent e)
{
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	if (event_of(e)->captured)
		return CUDA_ERROR_CAPTURED_EVENT;
	wait_reached(event_of(e)->at);
	pools_release_at_sync();
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuEventDestroy_v2(CUevent e)
{
	delete event_of(e);
	return CUDA_SUCCESS;
}

// ---- test-only, looked up with dlsym ----

// paused: work enqueued on s from now on is not reached until resumed.
FAKE_API int fakecuda_stream_pause(CUstream s, int paused)
{
	StreamRef st = stream_of(s);
	if (!st || !s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
		return CUDA_ERROR_INVALID_HANDLE;
	pause(st, paused != 0);
	return CUDA_SUCCESS;
}
