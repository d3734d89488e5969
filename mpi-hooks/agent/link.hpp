// The agent's link to the engine: connecting lazily (one warning when it
// cannot), the engine's and the daemon's calls, the hello's facts (the job's GPUs, the chunk
// size, the host node for evicted data), what the engine knows of each
// buffer (registration, priorities, frees), and, when the daemon restarts,
// losing all that and registering every buffer again.
//
// Locks, in order:
//   mu_         connecting and losing: state_, next_try_, warned_,
//               attempts_. Held across the connection and its hello (the
//               link's set-up, which no allocation waits for twice); the
//               caller registers what was allocated meanwhile after it
//               (registration.hpp). Before Buffer::op.
//   client_mu_  the engine's and the daemon's calls and the devices whose
//               context memory the engine was told about: all belong to
//               one connection. A leaf.
// Nothing here calls out of the link under a buffer's op: register_buffer
// returns the engine's reply, and its caller places the buffer.
// connected_, live_ and the hello's facts are atomics: every allocation
// reads them, and none waits for a connection being made.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "daemon_calls.hpp"
#include "engine_calls.hpp"
#include "fork_safe.hpp"
#include "registry.hpp"

namespace gos::agent {

class DaemonClient;
class RankFacts;

// What the link hands the rest of the agent.
class LinkEvents {
public:
	// An order from the engine, on the client's thread.
	virtual void order(const gos_wire_order &o) = 0;
	// Connection number `connection` dropped. On the client's thread,
	// which Link::lose would wait for: another thread must call it.
	virtual void lost(std::uint64_t connection) = 0;
	// The engine went, or a new one came: orders queued are void. With
	// the link's mu_ held.
	virtual void engine_changed() = 0;

protected:
	~LinkEvents() = default;
};

class Link final : public ForkSafe {
public:
	Link(Registry &registry, const RankFacts &ranks, LinkEvents &events);

	// True when the engine is there to ask; connects when it is time to
	// try. Cheap when connected. *linked_now: this call made the link, and
	// its caller registers what was allocated meanwhile.
	bool ensure(bool *linked_now = nullptr);
	bool connected() const { return connected_.load(std::memory_order_acquire); }
	// Whether the engine accounts CUDA device dev's memory.
	bool manages(int dev) const;
	// Whether it does, or will once the daemon is back: a device the last
	// hello named, or any device of a Slurm job's process not linked yet.
	// Not after the daemon refused this process.
	bool expects(int dev) const;
	// The engine's calls, and the daemon's (the same client unless the
	// engine is gpuoversub.ko); null when unlinked.
	std::shared_ptr<EngineCalls> engine() const;
	std::shared_ptr<DaemonCalls> daemon() const;
	// Connection number `connection` dropped (LinkEvents::lost): forget
	// the engine's ids and try again later.
	void lose(std::uint64_t connection);

	std::uint32_t ngpus() const { return ngpus_.load(std::memory_order_relaxed); }
	std::uint64_t chunk_size() const { return chunk_size_.load(std::memory_order_relaxed); }
	int numa() const { return numa_.load(std::memory_order_relaxed); }	// host node, -1 unknown

	// Tells the engine about b, whose op the caller holds; rep is where
	// the engine put its chunks (the caller places them before it lets go
	// of op, so that no order on b runs first). 1: nothing to do (b is
	// freed, or registered already). -ENOTCONN when unlinked: b is
	// registered on the next link. Other errors are the engine's refusal,
	// explained in *why (or warned about).
	// *settled: a SETTLED of b that came before the reply did.
	int register_buffer(const BufferRef &b, gos_rep_alloc &rep, std::string *why = nullptr,
			    std::optional<gos_wire_order> *settled = nullptr);
	// Once per connection and device, before a buffer of that device is
	// registered: the CUDA context's own memory, as an unevictable buffer.
	void account_context(int dev);
	// The priority of [offset, offset + length) of b, kept for b's next
	// registration. Takes b's op.
	int set_priority(Buffer &b, std::uint64_t offset, std::uint64_t length, std::uint32_t priority);
	// b's memory is gone (its op held): no order runs on it again, and the
	// engine forgets it.
	void freed(Buffer &b);

	// fork(): both locks are held across it; the child starts unlinked.
	void fork_prepare() override;
	void fork_parent() override;
	void fork_child() override;

private:
	enum class State { untried, connected, down, refused };

	bool try_connect();

	Registry &registry_;
	const RankFacts &ranks_;
	LinkEvents &events_;

	std::mutex mu_;
	State state_ = State::untried;
	std::chrono::steady_clock::time_point next_try_{};
	bool warned_ = false;
	std::uint64_t attempts_ = 0;		// numbers connections

	mutable std::mutex client_mu_;
	std::shared_ptr<EngineCalls> engine_;
	std::shared_ptr<DaemonClient> daemon_;
	std::vector<bool> context_reported_;	// by device

	std::atomic<bool> connected_{false};
	std::atomic<bool> refused_{false};
	std::atomic<std::uint64_t> live_{0};	// the connection in use, 0 when none
	std::atomic<std::uint32_t> ngpus_{0};
	std::atomic<std::uint64_t> chunk_size_{2 << 20};
	std::atomic<int> numa_{-1};
};

} // namespace gos::agent
