// The agent's link to the engine: connecting lazily, one warning when it
// cannot, registering what was allocated meanwhile, and starting over when
// the daemon restarts.
#include "link.hpp"

#include <unistd.h>

#include <cerrno>

#include "context_overhead.hpp"
#include "daemon_client.hpp"
#include "ranks.hpp"
#include "settings.hpp"

namespace gos::agent {

Link::Link(Registry &registry, const RankFacts &ranks, LinkEvents &events)
	: registry_(registry), ranks_(ranks), events_(events)
{
}

bool Link::manages(int dev) const
{
	return connected() && dev >= 0 && static_cast<std::uint32_t>(dev) < ngpus();
}

bool Link::expects(int dev) const
{
	if (dev < 0 || refused_.load(std::memory_order_relaxed))
		return false;
	std::uint32_t n = ngpus();
	return n ? static_cast<std::uint32_t>(dev) < n : settings().job_id != 0;
}

std::shared_ptr<EngineCalls> Link::engine() const
{
	std::lock_guard c(client_mu_);
	return engine_;
}

std::shared_ptr<DaemonCalls> Link::daemon() const
{
	std::lock_guard c(client_mu_);
	return daemon_;
}

bool Link::ensure(bool *linked_now)
{
	if (connected())
		return true;
	std::lock_guard g(mu_);
	if (state_ == State::refused || state_ == State::connected)
		return state_ == State::connected;
	if (std::chrono::steady_clock::now() < next_try_)
		return false;
	bool linked = try_connect();
	if (linked_now)
		*linked_now = linked;
	return linked;
}

// Called with mu_ held.
bool Link::try_connect()
{
	next_try_ = std::chrono::steady_clock::now() + std::chrono::seconds(1);
	std::uint64_t connection = ++attempts_;
	std::string why;
	std::shared_ptr<DaemonClient> daemon;
	std::shared_ptr<EngineCalls> engine;
	gos_rep_hello rep{};
	// In kernel mode the buffers live in the module: the daemon's socket
	// dropping is no loss of them, and the daemon client reconnects it.
	auto kernel_mode = std::make_shared<std::atomic<bool>>(false);
	try {
		daemon = std::make_shared<DaemonClient>(
			settings().socket, [this](const gos_wire_order &o) { events_.order(o); },
			[this, connection, kernel_mode] {
				if (kernel_mode->load())
					return;
				if (live_.load() == connection)
					connected_.store(false, std::memory_order_release);
				events_.lost(connection);
			});
		gos_req_hello req{};
		req.pid = static_cast<std::uint32_t>(getpid());
		ranks_.fill(req);
		req.job_id = settings().job_id;
		int err = daemon->hello(req, rep);
		if (!err && (rep.flags & GOS_HELLO_FLAG_KERNEL)) {
			kernel_mode->store(true);
			daemon->rejoin_after_restarts(req);
			engine = attach_kernel(daemon, rep.chunk_size, [this](const gos_wire_order &o) { events_.order(o); });
		} else {
			engine = daemon;
		}
		if (err) {
			why = daemon->error();
			engine.reset();
			daemon.reset();
			// EAGAIN: this uid had too many hellos refused; tried again later.
			if (err != -ENOTCONN && err != -EAGAIN) {
				state_ = State::refused;
				refused_.store(true, std::memory_order_relaxed);
				warn("gpuoversubd refused this process: " + why +
				     (settings().required ? "; GPUOVERSUB_REQUIRED=1, so GPU allocations will fail"
							  : "; its GPU memory is not managed"));
				return false;
			}
		} else {
			ranks_.tell(*daemon);	// the node name, which hello does not carry
		}
	} catch (const std::exception &e) {
		why = e.what();
		engine.reset();
		daemon.reset();
	}
	if (!daemon) {
		if (!warned_)
			warn("cannot reach gpuoversubd (" + why + "); " +
			     (settings().required ? "GPUOVERSUB_REQUIRED=1, so GPU allocations fail until it is back"
						  : settings().job_id ? "GPU memory is allocated as managed memory, on the host "
										"when the GPU is full, until it is back"
								      : "GPU memory passes through to the driver until it is back"));
		warned_ = true;
		state_ = State::down;
		return false;
	}
	events_.engine_changed();
	if (warned_)
		warn("connected to gpuoversubd; GPU memory is managed from now on");
	ngpus_.store(rep.ngpus, std::memory_order_relaxed);
	chunk_size_.store(rep.chunk_size, std::memory_order_relaxed);
	{
		std::lock_guard c(client_mu_);
		engine_ = std::move(engine);
		daemon_ = std::move(daemon);
		context_reported_.assign(rep.ngpus, false);
	}
	state_ = State::connected;
	live_.store(connection);
	connected_.store(true, std::memory_order_release);
	return true;
}

void Link::lose(std::uint64_t connection)
{
	std::lock_guard g(mu_);
	if (state_ != State::connected || live_.load() != connection)
		return;	// an attempt that never linked, or a loss already handled
	connected_.store(false, std::memory_order_release);
	live_.store(0);
	{
		std::lock_guard c(client_mu_);
		engine_.reset();	// the last holder joins the reader, which has finished
		daemon_.reset();
	}
	registry_.forget_ids();
	events_.engine_changed();
	state_ = State::down;
	next_try_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
	warn("lost gpuoversubd; GPU memory is allocated as managed memory, on the host when the GPU is full, "
	     "until it is back, then " +
	     std::to_string(registry_.all().size()) + " buffer(s) are registered again");
}

// The context's memory on dev, as one unevictable buffer: made the first
// time, registered again (not made anew) on every later connection.
void Link::account_context(int dev)
{
	{
		std::lock_guard c(client_mu_);
		auto d = static_cast<std::size_t>(dev);
		if (!manages(dev) || d >= context_reported_.size() || context_reported_[d])
			return;
		context_reported_[d] = true;
	}
	std::uint64_t key = ~0ULL - static_cast<std::uint64_t>(dev);	// never a handle: VMM handles are pointers
	BufferRef b = registry_.find(key, true);
	if (!b) {
		std::uint64_t tracked = 0;
		for (const BufferRef &t : registry_.all())
			if (t->dev == dev && !t->evictable())
				tracked += t->size;
		std::uint64_t bytes = context_bytes(dev, tracked);
		if (!bytes)
			return;
		b = std::make_shared<Buffer>(key, bytes, dev, nullptr, Backing::context);
		registry_.add(b);
	}
	std::lock_guard op(b->op);
	gos_rep_alloc rep;
	register_buffer(b, rep);	// unevictable: nothing to place
}

int Link::register_buffer(const BufferRef &b, gos_rep_alloc &rep, std::string *why,
			  std::optional<gos_wire_order> *settled)
{
	if (!manages(b->dev))
		return -ENOTCONN;
	if (b->freed || b->engine_id)
		return 1;
	auto engine = this->engine();
	if (!engine)
		return -ENOTCONN;
	gos_req_alloc req{};
	req.gpu = static_cast<std::uint32_t>(b->dev);
	req.priority = b->priority;
	req.flags = (b->evictable() ? 0 : GOS_ALLOC_FLAG_UNEVICTABLE) | (b->registered ? GOS_ALLOC_FLAG_AGAIN : 0);
	req.size = b->size;
	rep = gos_rep_alloc{};
	if (int err = engine->alloc(req, rep)) {
		if (why)
			*why = engine->error();
		else if (err != -ENOTCONN)
			warn("gpuoversubd would not account a buffer of " + std::to_string(b->size) +
			     " bytes: " + engine->error());
		return err;
	}
	std::optional<gos_wire_order> early = registry_.set_id(b, rep.buffer);
	if (settled)
		*settled = early;
	b->registered = true;
	numa_.store(rep.numa_node, std::memory_order_relaxed);
	for (const PriorityRange &r : b->ranges) {
		gos_req_priority p{rep.buffer, r.offset, r.length, r.priority, 0};
		engine->set_priority(p);
	}
	return 0;
}

int Link::set_priority(Buffer &b, std::uint64_t offset, std::uint64_t length, std::uint32_t priority)
{
	std::lock_guard op(b.op);
	if (b.freed)
		return -ENOENT;
	if (offset == 0 && length == b.size) {
		b.priority = priority;
		b.ranges.clear();
	}
	b.ranges.push_back({offset, length, priority});
	auto engine = this->engine();
	if (!b.engine_id || !engine)
		return 0;	// applied when it is registered
	gos_req_priority req{b.engine_id, offset, length, priority, 0};
	int err = engine->set_priority(req);
	return err == -ENOTCONN ? 0 : err;
}

void Link::freed(Buffer &b)
{
	b.freed = true;
	if (b.engine_id)
		if (auto engine = this->engine())
			engine->free(b.engine_id);
}

void Link::fork_prepare()
{
	mu_.lock();
	client_mu_.lock();
}

void Link::fork_parent()
{
	client_mu_.unlock();
	mu_.unlock();
}

// The child shares its parent's socket (and /dev/gpuoversub file), which
// it may not use: it drops the clients (leaking, not destroying: their
// threads are not here) and links anew if it ever allocates.
void Link::fork_child()
{
	if (daemon_) {
		if (engine_.get() != daemon_.get())	// kernel mode: the engine's own file
			engine_->abandon();
		daemon_->abandon();
		new std::shared_ptr<EngineCalls>(std::move(engine_));	// leaked on purpose
		new std::shared_ptr<DaemonClient>(std::move(daemon_));
	}
	connected_.store(false);
	refused_.store(false);
	live_.store(0);
	state_ = State::untried;
	warned_ = false;
	fork_parent();	// releases the locks, as in the parent
}

} // namespace gos::agent
