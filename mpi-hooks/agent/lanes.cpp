#include "lanes.hpp"

#include <pthread.h>

#include <algorithm>
#include <new>

#include "driver.hpp"
#include "reentry.hpp"

namespace gos::agent {

void relax_capture()
{
	CUstreamCaptureMode relaxed = CU_STREAM_CAPTURE_MODE_RELAXED;
	call_driver(&Driver::cuThreadExchangeStreamCaptureMode, &relaxed);
}

void Lanes::run(unsigned n, const std::function<void(unsigned)> &work)
{
	{
		std::unique_lock l(mu_);
		for (; started_ < n; started_++) {
			pthread_t thread;
			auto *start = new Start{this, started_, generation_};
			if (pthread_create(&thread, nullptr, thread_main, start) != 0) {
				delete start;
				break;
			}
			pthread_detach(thread);
		}
		n = std::max(1u, std::min(n, started_));
		work_ = &work;
		active_ = n;
		pending_ = n - 1;
		generation_++;
	}
	go_.notify_all();
	work(0);
	std::unique_lock l(mu_);
	done_.wait(l, [&] { return pending_ == 0; });
	work_ = nullptr;
}

void *Lanes::thread_main(void *start)
{
	Start s = *static_cast<Start *>(start);
	delete static_cast<Start *>(start);
	s.lanes->serve(s.lane, s.seen);
	return nullptr;
}

void Lanes::serve(unsigned lane, std::uint64_t seen)
{
	Reentry inside;	// nothing this thread does is the application's
	relax_capture();
	std::unique_lock l(mu_);
	for (;;) {
		go_.wait(l, [&] { return generation_ != seen; });
		seen = generation_;
		if (lane >= active_)
			continue;
		const auto *work = work_;
		l.unlock();
		(*work)(lane);
		l.lock();
		if (--pending_ == 0)
			done_.notify_all();
	}
}

void Lanes::fork_child()
{
	work_ = nullptr;
	active_ = pending_ = 0;
	started_ = 1;
	// Made anew: the parent's threads may have been waiting on them.
	new (&go_) std::condition_variable;
	new (&done_) std::condition_variable;
	mu_.unlock();
}

} // namespace gos::agent
