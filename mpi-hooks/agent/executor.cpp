#include "executor.hpp"

#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <map>
#include <new>
#include <utility>

#include "driver.hpp"
#include "runs.hpp"
#include "reentry.hpp"
#include "settings.hpp"

namespace gos::agent {

void OrderExecutor::start()
{
	std::lock_guard q(mu_);
	if (started_)
		return;
	pthread_t thread;
	started_ = pthread_create(&thread, nullptr, thread_main, this) == 0;
	if (started_)
		pthread_detach(thread);
}

void *OrderExecutor::thread_main(void *self)
{
	static_cast<OrderExecutor *>(self)->run();
	return nullptr;
}

void OrderExecutor::post(const gos_wire_order &o)
{
	{
		std::lock_guard q(mu_);
		orders_.push_back(o);
	}
	cv_.notify_one();
}

void OrderExecutor::prefetch_later(const BufferRef &b, const Registration &r)
{
	{
		std::lock_guard q(mu_);
		prefetches_.emplace_back(b, r);
	}
	cv_.notify_one();
}

void OrderExecutor::lost(std::uint64_t connection)
{
	{
		std::lock_guard q(mu_);
		lost_ = connection;
	}
	cv_.notify_one();
}

void OrderExecutor::nudge()
{
	{
		std::lock_guard q(mu_);
		nudged_ = true;
	}
	cv_.notify_one();
}

void OrderExecutor::clear()
{
	std::lock_guard q(mu_);
	orders_.clear();
	prefetches_.clear();	// their buffers are registered anew, and placed then
}

void OrderExecutor::run()
{
	Reentry inside;	// nothing this thread does is the application's
	relax_capture();
	for (;;) {
		std::vector<gos_wire_order> batch;
		std::vector<std::pair<BufferRef, Registration>> due;
		std::uint64_t lost;
		{
			std::unique_lock q(mu_);
			cv_.wait_for(q, std::chrono::milliseconds(100),
				     [&] { return lost_ || nudged_ || !orders_.empty() || !prefetches_.empty(); });
			nudged_ = false;
			lost = std::exchange(lost_, 0);
			due.swap(prefetches_);
			if (!lost)
				while (!orders_.empty() && batch.size() < max_batch) {
					batch.push_back(orders_.front());
					orders_.pop_front();
				}
		}
		if (lost)
			link_.lose(lost);
		prefetch(due);
		execute(batch);
		frees_.reap();
		reserve_.refill();
		report_activity();
		bool linked_now = false;
		if (link_.ensure(&linked_now) && linked_now)	// relinks once the daemon is back
			register_waiting(link_, placement_, registry_);
	}
}

// Each still as registered and moved by no order since: else an order
// ran on it first, and the engine says where its chunks are now.
void OrderExecutor::prefetch(const std::vector<std::pair<BufferRef, Registration>> &due)
{
	for (const auto &[b, r] : due) {
		std::lock_guard op(b->op);
		if (b->freed || b->engine_id != r.engine_id)
			continue;
		if (b->moves == r.moves)
			placement_.place(*b, 0, r.device_bytes, true, -1);
		else
			placement_.place_as_engine_says(*b);
	}
}

// Every 100 ms (under any sensible balloon period), the launches since the last report, for each GPU the
// process holds memory on (a process's launches are not told apart by GPU).
// Zeros are reported too: they are what makes an idle job look idle.
void OrderExecutor::report_activity()
{
	auto now = std::chrono::steady_clock::now();
	auto daemon = link_.daemon();
	if (now < next_activity_ || !daemon)
		return;
	next_activity_ = now + std::chrono::milliseconds(100);
	std::uint64_t total = launches_.load(std::memory_order_relaxed);
	auto delta = static_cast<std::uint32_t>(std::min<std::uint64_t>(total - launches_reported_, UINT32_MAX));
	launches_reported_ = total;
	std::vector<bool> used = registry_.gpus_in_use(link_.ngpus());
	for (std::uint32_t gpu = 0; gpu < used.size(); gpu++)
		if (used[gpu])
			daemon->activity(gpu, delta);
}

// Runs the orders in arrival order. Consecutive moves are issued together
// and waited for once: an engine picking chunks at random sends many small
// orders, and one stream synchronization each would cap eviction far below
// the link's bandwidth (and let orders time out).
void OrderExecutor::execute(const std::vector<gos_wire_order> &batch)
{
	std::vector<const gos_wire_order *> moves;
	for (const gos_wire_order &o : batch) {
		if (o.kind == GOS_ORDER_EVICT || o.kind == GOS_ORDER_RETURN) {
			moves.push_back(&o);
			continue;
		}
		execute_moves(moves);
		moves.clear();
		if (o.kind == GOS_ORDER_ADVICE) {
			advice_.advise(o);
		} else if (o.kind == GOS_ORDER_SETTLED) {
			BufferRef b = registry_.settled_buffer(o);
			if (!b)
				continue;	// kept for its registration to place
			std::unique_lock op(b->op);
			if (!b->freed && b->engine_id == o.buffer)
				placement_.place_settled(*b, o);
		}
	}
	execute_moves(moves);
}

void OrderExecutor::execute_moves(const std::vector<const gos_wire_order *> &moves)
{
	if (moves.empty())
		return;
	struct Move {
		const gos_wire_order *order;
		BufferRef buffer;
		int err;
	};
	std::vector<Move> issued;
	std::map<const Buffer *, std::unique_lock<std::mutex>> held;	// each buffer's op lock, once
	auto start = std::chrono::steady_clock::now();
	std::vector<Span> spans;
	for (const gos_wire_order *o : moves) {
		BufferRef b = registry_.by_id(o->buffer);
		if (!b)
			continue;	// freed since; the engine dropped the order with it
		if (!held.count(b.get()))
			held.emplace(b.get(), std::unique_lock(b->op));
		if (b->freed || b->engine_id != o->buffer)
			continue;
		b->moves++;
		issued.push_back({o, b, b->evictable() && o->offset < b->size ? 0 : -EINVAL});
		if (!issued.back().err)
			spans.push_back({b.get(), o->offset, std::min(o->length, b->size - o->offset),
					 o->kind == GOS_ORDER_EVICT, o->numa_node});
	}
	std::vector<Move *> valid;	// by span index
	for (Move &m : issued)
		if (!m.err)
			valid.push_back(&m);
	std::vector<Run> runs = plan_runs(spans, settings().evict_workers, std::max<std::uint64_t>(link_.chunk_size(), 1));
	unsigned lanes = 0;
	for (const Run &r : runs)
		lanes = std::max(lanes, r.lane + 1);
	std::mutex failed_mu;	// a span cut between lanes fails from either
	auto failed = [&](const Run &r, int err) {
		std::lock_guard g(failed_mu);
		for (std::size_t i : r.spans)
			valid[i]->err = err;
	};
	// Every run advised first (the driver serializes advice against
	// migrations; placement.hpp), then each lane migrates its runs on its
	// own stream and waits once per context; a run's failure is each of its
	// orders'.
	std::vector<bool> advised(runs.size());
	for (std::size_t i = 0; i < runs.size(); i++) {
		const Run &r = runs[i];
		int err = placement_.place(*static_cast<const Buffer *>(r.buffer), r.offset, r.length, !r.evict, r.numa,
					   0, false, Step::advise);
		advised[i] = !err;
		if (err)
			failed(r, err);
	}
	lanes_.run(lanes, [&](unsigned lane) {
		std::map<CUcontext, std::vector<const Run *>> mine;
		for (std::size_t i = 0; i < runs.size(); i++) {
			const Run &r = runs[i];
			if (r.lane != lane || !advised[i])
				continue;
			const Buffer &b = *static_cast<const Buffer *>(r.buffer);
			if (int err = placement_.place(b, r.offset, r.length, !r.evict, r.numa, lane, b.dead, Step::prefetch))
				failed(r, err);
			mine[b.ctx].push_back(&r);
		}
		for (const auto &[ctx, ran] : mine)
			if (int err = placement_.wait(ctx, lane))
				for (const Run *r : ran)
					failed(*r, err);
	});
	auto took = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start);
	auto engine = link_.engine();
	if (!engine)
		return;
	std::vector<gos_req_order_done> acks;
	for (const Move &m : issued)
		acks.push_back({m.order->id, m.err == 0 ? 1u : 0u, 0, static_cast<std::uint64_t>(took.count())});
	std::vector<int> acked = engine->orders_done(acks);
	bool late = false;	// then every buffer is put back where the engine says
	for (std::size_t i = 0; i < issued.size(); i++) {
		const Move &m = issued[i];
		bool evict = m.order->kind == GOS_ORDER_EVICT;
		if (acked[i] == -ENOENT) {
			// Too late: the engine gave up on the order, and while this
			// process was silent it counted whatever it took from it on the
			// host, unasked, in any buffer (docs/engine.md). Asked only once
			// every order of the batch is acknowledged, or a later order's
			// chunks, still "evicting", would be pulled back.
			late = true;
			continue;
		}
		if (m.err) {
			warn(std::string("could not ") + (evict ? "evict" : "return") + " " +
			     std::to_string(m.order->length) + " bytes; the engine keeps them where they were");
			continue;
		}
		(evict ? evictions_ : returns_)++;
		(evict ? bytes_evicted_ : bytes_returned_) += m.order->length;
	}
	if (late)
		for (const BufferRef &buffer : registry_.all())
			placement_.place_as_engine_says(*buffer);
	if (settings().verbose) {
		std::uint64_t bytes = 0;
		for (const Move &m : issued)
			bytes += m.order->length;
		auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
		debug("batch of " + std::to_string(issued.size()) + " orders, " + std::to_string(bytes >> 20) + " MiB in " +
		      std::to_string(runs.size()) + " runs on " + std::to_string(lanes) + " lanes: moved in " +
		      std::to_string(took.count() / 1e6) + " ms, acknowledged in " +
		      std::to_string(ms(start + took, std::chrono::steady_clock::now())) + " ms");
	}
}

void OrderExecutor::fork_child()
{
	lanes_.fork_child();
	orders_.clear();
	prefetches_.clear();
	lost_ = 0;
	nudged_ = false;
	started_ = false;
	// Made anew: the parent's thread may have been waiting on it, and a
	// waiter that does not exist here could hold up a notification.
	new (&cv_) std::condition_variable;
	mu_.unlock();
}

} // namespace gos::agent
