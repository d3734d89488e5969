// The agent of one process: its link to the engine, the buffers it backs,
// and the thread that carries out the engine's orders. Hooks and the public
// API call into the one instance, which is never destroyed (applications
// may allocate from atexit handlers).
#pragma once

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <gpuoversub/gpuoversub.h>

#include "cuda_api.hpp"
#include "engine_client.hpp"
#include "registry.hpp"

namespace gos::agent {

// Set while the agent runs driver code on a thread, so driver-internal
// calls into exported hooks go straight to the driver.
class Reentry {
public:
	Reentry() { depth_++; }
	~Reentry() { depth_--; }
	Reentry(const Reentry &) = delete;
	Reentry &operator=(const Reentry &) = delete;
	static bool active() { return depth_ > 0; }

private:
	static thread_local int depth_;
};

// How an allocation hook wants its memory.
enum class Want {
	evictable,	// managed memory the engine may move
	app_managed,	// the application asked for managed memory itself
	pinned,		// counted, stays on the device
};

class Agent {
public:
	static Agent &get();

	// Allocation paths; they return what the driver or the policy says.
	CUresult allocate(CUdeviceptr *dptr, std::size_t size, Want want, unsigned managed_flags = 0);
	CUresult allocate_async(CUdeviceptr *dptr, std::size_t size, CUstream stream, CUmemoryPool pool,
				bool per_thread);
	CUresult release(CUdeviceptr dptr);
	CUresult release_async(CUdeviceptr dptr, CUstream stream, bool per_thread);
	CUresult vmm_create(CUmemGenericAllocationHandle *handle, std::size_t size, const CUmemAllocationProp *prop,
			    unsigned long long flags);
	CUresult vmm_release(CUmemGenericAllocationHandle handle);
	CUresult mem_info(std::size_t *free_bytes, std::size_t *total_bytes);

	// One more kernel launch: a relaxed increment, nothing else.
	static void count_launch() { launches_.fetch_add(1, std::memory_order_relaxed); }

	// Public API (gpuoversub.h).
	int set_priority(std::uint64_t ptr, std::uint64_t len, std::uint32_t prio);
	int set_priority_of_buffer(std::uint64_t ptr, std::uint32_t prio);	// the whole allocation
	int stats(gpuoversub_usage &out);
	int on_advice(gpuoversub_advice_fn fn, void *ctx);
	int set_rank(int rank, int local_rank, int world_size, const char *node);
	int report_ranks(const gos_rank_record *records, std::size_t count);	// for libgpuoversub_mpi

private:
	Agent();
	enum class Link { untried, connected, down, refused };

	bool ensure_link();
	bool try_connect();
	int register_buffer(const BufferRef &b, std::string *why = nullptr);
	void register_context(int dev);
	void lose_link();
	bool manages(int dev) const;
	CUresult refuse(const char *what, std::size_t size);
	bool current_device(CUdevice &dev, CUcontext &ctx) const;
	CUresult track(const BufferRef &b);

	// executor.cpp
	static void *thread_main(void *self);
	void post(const gos_wire_order &o);	// for the agent's thread, in order
	void run();
	void execute(const std::vector<gos_wire_order> &batch);
	void execute_moves(const std::vector<const gos_wire_order *> &moves);
	static constexpr std::size_t max_batch = 256;	// orders issued before one wait
	void advise(const gos_wire_order &o);	// advice.cpp
	std::uint64_t pin_for(const gos_wire_order &o);
	void send_rank(EngineClient &engine);	// ranks.cpp
	void reap_deferred(bool wait);
	void report_activity();

	// placement.cpp
	CUstream stream_for(CUcontext ctx);
	// Advises and prefetches [offset, offset + length) of b on the agent's
	// stream of b's context, without waiting: orders wait once per batch.
	int place(const Buffer &b, std::uint64_t offset, std::uint64_t length, bool on_device, int numa);
	int move(const Buffer &b, CUdeviceptr p, std::uint64_t length, bool on_device, int numa);
	int place_as_engine_says(const Buffer &b);

	// fork handlers
	static void before_fork();
	static void after_fork_parent();
	static void after_fork_child();

	Registry registry_;
	std::mutex link_mu_;			// connecting, losing, registering
	Link link_ = Link::untried;
	std::atomic<bool> connected_{false};
	std::shared_ptr<EngineClient> engine();	// null when unlinked
	std::mutex client_mu_;
	std::shared_ptr<EngineClient> client_;
	std::chrono::steady_clock::time_point next_try_{};
	bool warned_ = false;
	std::uint32_t ngpus_ = 0;
	std::uint64_t chunk_size_ = 2 << 20;
	int numa_ = -1;
	std::vector<bool> context_reported_;

	std::mutex queue_mu_;
	std::condition_variable queue_cv_;
	std::deque<gos_wire_order> orders_;
	bool lost_ = false;
	pthread_t thread_{};
	bool thread_started_ = false;

	struct Deferred {
		BufferRef buffer;
		CUevent done;
	};
	std::mutex deferred_mu_;
	std::vector<Deferred> deferred_;

	std::mutex streams_mu_;
	std::map<CUcontext, CUstream> streams_;

	std::mutex rank_mu_;
	bool rank_known_ = false;
	gos_req_rank rank_{};

	std::atomic<std::uint64_t> advice_seen_{0}, pinned_bytes_{0};
	std::mutex advice_mu_;
	gpuoversub_advice_fn advice_fn_ = nullptr;
	void *advice_ctx_ = nullptr;

	std::atomic<std::uint64_t> evictions_{0}, returns_{0}, bytes_evicted_{0}, bytes_returned_{0};
	static inline std::atomic<std::uint64_t> launches_{0};
	std::uint64_t launches_reported_ = 0;
	std::chrono::steady_clock::time_point next_activity_{};
};

} // namespace gos::agent
