// A part of the agent whose locks fork() must not split. The agent's fork
// handlers call every part in lock order (agent.hpp), so that the child's
// copy of each lock is free and each part's state is whole.
#pragma once

namespace gos::agent {

class ForkSafe {
public:
	virtual void fork_prepare() = 0;	// takes the part's locks
	virtual void fork_parent() = 0;		// releases them
	virtual void fork_child() = 0;		// drops what the child may not use, releases them

protected:
	~ForkSafe() = default;
};

} // namespace gos::agent
