// Which engine tenant is whose. A job has one tenant per GPU it uses, each
// known by its place in the job's own GPU order (its view index). The book
// makes them, keeps them over a daemon restart when the engine outlived the
// daemon, retires them when their job ends, and tells the engine which
// processes are the job's.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>

#include "daemon/gpud/answer.hpp"
#include "daemon/gpud/engine_backend.hpp"
#include "daemon/gpud/jobs.hpp"

namespace gos::gpud {

class TenantBook {
public:
	struct Owner {
		std::uint64_t job;
		std::uint32_t view;	// index in the job's GPUs
	};

	explicit TenantBook(EngineControl &engine) : engine_(engine) {}

	// A tenant for each of the job's GPUs without one; the engine's
	// refusal of one, if it refuses (those made before it stay, the job's).
	std::optional<Refusal> ensure(Job &job);
	// After a restart: keeps the job's tenants if the engine outlived the
	// daemon; otherwise folds their last counters into the base. Whether
	// each GPU's tenant was kept, in the job's GPU order.
	std::vector<bool> adopt(Job &job);
	// Removes the engine's tenants that no job record names.
	void sweep_unowned();
	// A tenant whose job ended: removed, or kept at the lowest weight while
	// a process that outlived the job still holds memory in it.
	void retire(std::uint32_t tenant);
	void retry_retiring();
	// Binds the job's cgroup and tasks to its tenants; the first failure.
	int bind(const Job &job);
	void unbind(const Job &job);

	std::optional<Owner> owner(std::uint32_t tenant) const;
	std::uint64_t host_bytes();	// in host RAM, over every job's tenants

private:
	EngineControl &engine_;
	std::map<std::uint32_t, Owner> owner_;
	std::set<std::uint32_t> retiring_;	// tenants of ended jobs the kernel could not remove yet
};

} // namespace gos::gpud
