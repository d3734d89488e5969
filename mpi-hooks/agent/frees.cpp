#include "frees.hpp"

#include "driver.hpp"

namespace gos::agent {

void DeferredFrees::add(BufferRef b, CUevent done)
{
	std::lock_guard g(mu_);
	deferred_.push_back({std::move(b), done});
}

void DeferredFrees::reap()
{
	const Driver &d = driver();
	std::vector<Deferred> ready;
	{
		std::lock_guard g(mu_);
		std::erase_if(deferred_, [&](const Deferred &f) {
			bool done = !f.done || d.cuEventQuery(f.done) == CUDA_SUCCESS;
			if (done)
				ready.push_back(f);
			return done;
		});
	}
	for (Deferred &f : ready) {
		if (f.done)
			d.cuEventDestroy_v2(f.done);
		std::lock_guard op(f.buffer->op);
		d.cuMemFree_v2(f.buffer->base);
		link_.freed(*f.buffer);
	}
}

void DeferredFrees::fork_child()
{
	// Leaked, not destroyed: see Registry::fork_child.
	new std::vector<Deferred>(std::move(deferred_));
	mu_.unlock();
}

} // namespace gos::agent
