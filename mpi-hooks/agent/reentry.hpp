// The reentry guard: set while the agent itself runs driver code on a
// thread (a hook's own work, the agent's thread for its whole life), so
// that driver-internal calls into exported hooks go straight to the
// driver. No agent lock is therefore ever taken again from inside a
// driver call the agent made while holding one.
#pragma once

namespace gos::agent {

class Reentry {
public:
	Reentry() { depth_++; }
	~Reentry() { depth_--; }
	Reentry(const Reentry &) = delete;
	Reentry &operator=(const Reentry &) = delete;
	static bool active() { return depth_ > 0; }

private:
	static inline thread_local int depth_ = 0;
};

} // namespace gos::agent
