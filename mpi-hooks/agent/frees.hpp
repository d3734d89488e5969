// Buffers freed on a stream (cuMemFreeAsync) whose memory the agent backs
// with managed memory, which is not stream-ordered: each is freed, and the
// engine told, once the stream has passed an event recorded at the free.
//
// Lock: mu_ guards the list; a leaf (the frees themselves run after it is
// released, each under its buffer's op).
#pragma once

#include <mutex>
#include <vector>

#include "fork_safe.hpp"
#include "link.hpp"

namespace gos::agent {

class DeferredFrees final : public ForkSafe {
public:
	explicit DeferredFrees(Link &link) : link_(link) {}

	// done null: the stream was synchronized, free at the next reap.
	void add(BufferRef b, CUevent done);
	// Frees those whose stream has passed their event.
	void reap();

	// fork(): mu_ is held across it; the child frees none of its parent's.
	void fork_prepare() override { mu_.lock(); }
	void fork_parent() override { mu_.unlock(); }
	void fork_child() override;

private:
	struct Deferred {
		BufferRef buffer;
		CUevent done;
	};

	Link &link_;
	std::mutex mu_;
	std::vector<Deferred> deferred_;
};

} // namespace gos::agent
