// The agent's link to the engine: connecting lazily, one warning when it
// cannot, registering what was allocated meanwhile, and starting over when
// the daemon restarts. Also the fork handlers: a child starts unlinked.
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "agent.hpp"
#include "context_overhead.hpp"
#include "driver.hpp"
#include "settings.hpp"

namespace gos::agent {

thread_local int Reentry::depth_ = 0;

Agent &Agent::get()
{
	static Agent *agent = new Agent;	// never destroyed: see agent.hpp
	return *agent;
}

Agent::Agent()
{
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

bool Agent::manages(int dev) const
{
	return connected_.load(std::memory_order_acquire) && dev >= 0 && static_cast<std::uint32_t>(dev) < ngpus_;
}

// True when the engine is there to ask. Cheap when connected.
bool Agent::ensure_link()
{
	if (connected_.load(std::memory_order_acquire))
		return true;
	std::lock_guard g(link_mu_);
	if (!thread_started_) {
		thread_started_ = pthread_create(&thread_, nullptr, thread_main, this) == 0;
		if (thread_started_)
			pthread_detach(thread_);
	}
	if (link_ == Link::refused || link_ == Link::connected)
		return link_ == Link::connected;
	if (std::chrono::steady_clock::now() < next_try_)
		return false;
	return try_connect();
}

// Called with link_mu_ held.
bool Agent::try_connect()
{
	next_try_ = std::chrono::steady_clock::now() + std::chrono::seconds(1);
	std::string why;
	std::shared_ptr<EngineClient> client;
	// In kernel mode the buffers live in the module: the daemon's socket
	// dropping is no loss of them, and the kernel client reconnects it.
	auto kernel_mode = std::make_shared<std::atomic<bool>>(false);
	try {
		std::unique_ptr<EngineClient> daemon = connect_daemon(
			settings().socket,
			[this](const gos_wire_order &o) { post(o); },
			[this, kernel_mode] {
				if (kernel_mode->load())
					return;
				{
					std::lock_guard q(queue_mu_);
					lost_ = true;
				}
				connected_.store(false, std::memory_order_release);
				queue_cv_.notify_one();
			});
		gos_req_hello req{};
		req.pid = static_cast<std::uint32_t>(getpid());
		req.rank = settings().rank;
		req.local_rank = settings().local_rank;
		req.world_size = settings().world_size;
		{
			std::lock_guard g(rank_mu_);
			if (rank_known_) {
				req.rank = rank_.rank;
				req.local_rank = rank_.local_rank;
				req.world_size = rank_.world_size;
			}
		}
		req.job_id = settings().job_id;
		gos_rep_hello rep{};
		int err = daemon->hello(req, rep);
		if (!err && (rep.flags & GOS_HELLO_FLAG_KERNEL)) {
			kernel_mode->store(true);
			daemon = attach_kernel(std::move(daemon), settings().socket, req, rep.chunk_size,
					       [this](const gos_wire_order &o) { post(o); });
		}
		client = std::move(daemon);
		if (err) {
			why = client->error();
			client.reset();
			if (err != -ENOTCONN) {
				link_ = Link::refused;
				warn("gpuoversubd refused this process: " + why +
				     (settings().required ? "; GPUOVERSUB_REQUIRED=1, so GPU allocations will fail"
							  : "; its GPU memory is not managed"));
				return false;
			}
		} else {
			ngpus_ = rep.ngpus;
			chunk_size_ = rep.chunk_size;
			context_reported_.assign(rep.ngpus, false);
			send_rank(*client);	// the node name, which hello does not carry
		}
	} catch (const std::exception &e) {
		why = e.what();
		client.reset();
	}
	if (!client) {
		if (!warned_ || link_ == Link::connected)
			warn("cannot reach gpuoversubd (" + why + "); " +
			     (settings().required ? "GPUOVERSUB_REQUIRED=1, so GPU allocations fail until it is back"
						  : "GPU memory passes through to the driver until it is back"));
		warned_ = true;
		link_ = Link::down;
		return false;
	}
	{
		std::lock_guard q(queue_mu_);
		lost_ = false;
		orders_.clear();
	}
	if (warned_)
		warn("connected to gpuoversubd; GPU memory is managed from now on");
	{
		std::lock_guard c(client_mu_);
		client_ = std::move(client);
	}
	link_ = Link::connected;
	connected_.store(true, std::memory_order_release);
	for (const BufferRef &b : registry_.unregistered())
		register_buffer(b);
	return true;
}

std::shared_ptr<EngineClient> Agent::engine()
{
	std::lock_guard c(client_mu_);
	return client_;
}

// Reports the CUDA context's own memory on dev once, as unevictable.
void Agent::register_context(int dev)
{
	if (!manages(dev) || context_reported_[static_cast<std::size_t>(dev)])
		return;
	context_reported_[static_cast<std::size_t>(dev)] = true;
	std::uint64_t tracked = 0;
	for (const BufferRef &b : registry_.all())
		if (b->dev == dev && !b->evictable())
			tracked += b->size;
	std::uint64_t bytes = context_bytes(dev, tracked);
	if (!bytes)
		return;
	auto b = std::make_shared<Buffer>();
	b->base = ~0ULL - static_cast<std::uint64_t>(dev);	// never a handle: VMM handles are pointers
	b->size = bytes;
	b->dev = dev;
	b->backing = Backing::context;
	registry_.add(b);
	register_buffer(b);
}

// Tells the engine about b and places it as the engine says. A lost link
// leaves b unregistered, to be tried again on the next connection; other
// errors are the engine's refusal (a limit), returned with its reason.
int Agent::register_buffer(const BufferRef &b, std::string *why)
{
	if (!manages(b->dev))
		return -ENOTCONN;
	if (b->backing != Backing::context)
		register_context(b->dev);
	std::lock_guard op(b->op);
	if (b->freed || b->engine_id)
		return 0;
	gos_req_alloc req{};
	req.gpu = static_cast<std::uint32_t>(b->dev);
	req.priority = b->priority;
	req.flags = b->evictable() ? 0 : GOS_ALLOC_FLAG_UNEVICTABLE;
	req.size = b->size;
	gos_rep_alloc rep{};
	auto engine = this->engine();
	if (!engine)
		return -ENOTCONN;
	if (int err = engine->alloc(req, rep)) {
		if (why)
			*why = engine->error();
		else if (err != -ENOTCONN)
			warn("gpuoversubd would not account a buffer of " + std::to_string(b->size) +
			     " bytes: " + engine->error());
		return err;
	}
	registry_.set_id(b, rep.buffer);
	numa_ = rep.numa_node;
	for (const PriorityRange &r : b->ranges) {
		gos_req_priority p{rep.buffer, r.offset, r.length, r.priority, 0};
		engine->set_priority(p);
	}
	if (b->evictable() && (rep.host_bytes || rep.waiting_bytes || !b->ranges.empty()))
		place_as_engine_says(*b);
	else if (b->backing == Backing::managed && settings().inline_prefetch)	// all on the device, like cuMemAlloc
		place(*b, 0, b->size, true, -1);
	else if (b->backing == Backing::managed) {
		// Deferred: the agent's thread prefetches it. The prefetch call blocks
		// ~330 us per 64 MiB on an H100; a kernel that touches the buffer first
		// populates it on the device by faults, which cost ~2.5% of kernel
		// bandwidth there (bench/RESULTS.md).
		gos_wire_order settle{};
		settle.kind = GOS_ORDER_SETTLED;
		settle.buffer = rep.buffer;
		post(settle);
	}
	return 0;
}

// The connection dropped: forget the engine's ids and try again later.
void Agent::lose_link()
{
	std::lock_guard g(link_mu_);
	if (link_ != Link::connected)
		return;
	connected_.store(false, std::memory_order_release);
	{
		std::lock_guard c(client_mu_);
		client_.reset();	// the last holder joins the reader, which has finished
	}
	registry_.forget_ids();
	{
		std::lock_guard q(queue_mu_);
		orders_.clear();
		lost_ = false;
	}
	link_ = Link::down;
	next_try_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
	warn("lost gpuoversubd; GPU memory passes through to the driver until it is back, then " +
	     std::to_string(registry_.all().size()) + " buffer(s) are registered again");
}

// Fork: hold every lock across it so the child's copies are consistent.
void Agent::before_fork()
{
	Agent &a = get();
	a.link_mu_.lock();
	a.client_mu_.lock();
	a.registry_.lock().lock();
	a.queue_mu_.lock();
	a.deferred_mu_.lock();
	a.streams_mu_.lock();
}

void Agent::after_fork_parent()
{
	Agent &a = get();
	a.streams_mu_.unlock();
	a.deferred_mu_.unlock();
	a.queue_mu_.unlock();
	a.registry_.lock().unlock();
	a.client_mu_.unlock();
	a.link_mu_.unlock();
}

// The child shares its parent's socket and CUDA state, neither of which it
// may use: it drops both (leaking, not destroying: their threads are not
// here) and links anew if it ever allocates.
void Agent::after_fork_child()
{
	Agent &a = get();
	if (a.client_) {
		a.client_->abandon();
		new std::shared_ptr<EngineClient>(std::move(a.client_));	// leaked on purpose
	}
	a.registry_.drop_all_for_child();
	a.orders_.clear();
	a.deferred_.clear();
	a.streams_.clear();
	a.thread_started_ = false;
	a.connected_.store(false);
	a.link_ = Link::untried;
	a.warned_ = false;
	a.lost_ = false;
	after_fork_parent();	// releases the locks, as in the parent
}

} // namespace gos::agent
