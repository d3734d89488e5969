// The memory pools the application makes (cuMemPoolCreate), and which of
// them the agent may serve with managed memory of its own: a device pool
// made without IPC handle types, whose pointers no other process is meant
// to open, or a device's default pool. docs/agent.md says why.
//
// Lock: mu_ guards the map; a leaf.
#pragma once

#include <mutex>
#include <unordered_map>

#include "cuda_api.hpp"
#include "fork_safe.hpp"

namespace gos::agent {

class PoolBook final : public ForkSafe {
public:
	void made(CUmemoryPool pool, const CUmemPoolProps &props);
	bool replaceable(CUmemoryPool pool, CUdevice dev) const;

	// fork(): mu_ is held across it; the child keeps the book, whose pools
	// are its parent's and never its own.
	void fork_prepare() override { mu_.lock(); }
	void fork_parent() override { mu_.unlock(); }
	void fork_child() override { mu_.unlock(); }

private:
	struct Facts {
		CUdevice dev;
		bool replaceable;
	};

	mutable std::mutex mu_;
	std::unordered_map<CUmemoryPool, Facts> pools_;
};

} // namespace gos::agent
