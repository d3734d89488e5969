// What a reload cannot apply: the start settings fixed when the daemon started.
#include "common/config/config.hpp"

namespace gos::config {

std::vector<std::string> restart_only_changes(const StartSettings &running, const StartSettings &next)
{
	std::vector<std::string> changed;
	auto check = [&](bool same, const char *key) {
		if (!same)
			changed.push_back(key);
	};
	check(running.socket == next.socket, "socket");
	check(running.state_dir == next.state_dir, "state_dir");
	check(running.engine == next.engine, "engine");
	check(running.chunk_size == next.chunk_size, "chunk_size");
	check(running.random_chunks == next.random_chunks, "chunk_selection");
	check(running.order_timeout_ns == next.order_timeout_ns, "order_timeout");
	check(running.advice_persist_ns == next.advice_persist_ns, "advice.persist");
	check(running.return_batch == next.return_batch, "return_batch");
	check(running.lend_backoff_ns == next.lend_backoff_ns, "lending.backoff");
	check(running.lend_backoff_max_ns == next.lend_backoff_max_ns, "lending.backoff_max");
	check(running.reserve == next.reserve, "reserve");
	check(running.fairness == next.fairness, "fairness (to or from fcfs or static)");
	check(running.simulated_gpus == next.simulated_gpus, "simulated_gpus");
	// The cadences are not in the file: they never differ.
	return changed;
}

} // namespace gos::config
