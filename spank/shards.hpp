// The shards a step holds on each of its GPUs. Slurm 22.05 tells the task
// SLURM_SHARDS_ON_NODE (the shards held on this node, all from one GPU:
// 22.05 does not spread a job's shards) and nothing of a GPU's own shard
// count, which gres.conf says: a node's `Name=shard Count=N` lines, split
// evenly over its `Name=gpu` devices, as Slurm splits them by default. Pure
// logic, tested without Slurm.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace gos::spank {

struct NodeShards {
	std::uint32_t per_gpu = 0;	// 0: no shards configured, or unknown
	std::string reason;		// why unknown; empty if known or none configured
};

// Reads gres.conf for node `node` (lines without NodeName apply to all).
NodeShards node_shards(std::istream &gres_conf, const std::string &node);

// The names of a hostlist expression (node1,gpu[01-04,7]), in order, and
// whether it names `node`.
std::vector<std::string> hostlist_names(std::string_view list);
bool hostlist_has(std::string_view list, std::string_view node);

struct StepShards {
	std::uint32_t held = 0, total = 0;	// on each of the step's GPUs
	std::string reason;
};

// shards_on_node is SLURM_SHARDS_ON_NODE; empty for a job holding whole
// GPUs, which holds all of each GPU's shards.
StepShards step_shards(std::string_view shards_on_node, std::uint32_t ngpus, const NodeShards &node);

} // namespace gos::spank
