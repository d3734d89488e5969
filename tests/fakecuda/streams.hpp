// Stream order in the fake driver: streams, points in their order, and
// stream capture. Work on a stream completes as it is enqueued unless a
// test pauses the stream (fakecuda_stream_pause); then everything enqueued
// afterwards is not reached until the stream resumes, which is what events,
// stream-ordered frees and pool reuse are judged by. streams.cpp says where
// each rule comes from.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace fakecuda {

struct StreamState;
using StreamRef = std::shared_ptr<StreamState>;

// A point in a stream's order; one without a stream is always reached.
struct StreamPoint {
	StreamRef stream;
	std::uint64_t pos = 0;
};

CUstream stream_create();
int stream_destroy(CUstream s);
// The stream behind a handle (the NULL, legacy and per-thread streams share
// one that is never paused); null for a handle that is no stream.
StreamRef stream_of(CUstream s);
StreamPoint enqueue(const StreamRef &s);
bool reached(const StreamPoint &p);
void wait_reached(const StreamPoint &p);
void wait_idle(const StreamRef &s);
void wait_all_idle();
bool idle(const StreamRef &s);
void pause(const StreamRef &s, bool paused);

// Capture. end_capture hands over the allocations made in it.
int begin_capture(const StreamRef &s, CUstreamCaptureMode mode);
int end_capture(const StreamRef &s, std::vector<std::uint64_t> &allocations);
CUstreamCaptureStatus capture_status(const StreamRef &s);
// Work that cannot be captured (synchronizing or querying the stream):
// CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED if s is capturing, which
// invalidates the capture; else 0.
int uncapturable(const StreamRef &s);
void capture_allocation(const StreamRef &s, std::uint64_t ptr);
CUstreamCaptureMode exchange_mode(CUstreamCaptureMode mode);
// A potentially unsafe call from this thread: 0 when allowed, else
// CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, the captures that forbid it
// invalidated.
int unsafe_call();

} // namespace fakecuda
