#include "spank/shards.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <sstream>
#include <strings.h>
#include <vector>

namespace gos::spank {
namespace {

std::optional<std::uint32_t> number(std::string_view s)
{
	std::uint32_t v = 0;
	auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
	if (ec != std::errc() || end != s.data() + s.size())
		return std::nullopt;
	return v;
}

// Entries of a range list "01-04,7" (the inside of a hostlist's brackets).
std::vector<std::string> expand_ranges(std::string_view ranges)
{
	std::vector<std::string> out;
	std::stringstream ss{std::string(ranges)};
	for (std::string part; std::getline(ss, part, ',');) {
		auto dash = part.find('-');
		auto lo = number(std::string_view(part).substr(0, dash));
		auto hi = dash == std::string::npos ? lo : number(std::string_view(part).substr(dash + 1));
		if (!lo || !hi || *hi < *lo || *hi - *lo > 4096)
			continue;
		std::size_t width = dash == std::string::npos ? part.size() : dash;
		for (auto i = *lo; i <= *hi; i++) {
			std::string n = std::to_string(i);
			out.push_back(std::string(n.size() < width ? width - n.size() : 0, '0') + n);
		}
	}
	return out;
}

// Top-level items of a hostlist: commas inside brackets do not split.
std::vector<std::string> hostlist_items(std::string_view list)
{
	std::vector<std::string> items(1);
	int depth = 0;
	for (char c : list) {
		depth += c == '[' ? 1 : c == ']' ? -1 : 0;
		if (c == ',' && !depth)
			items.emplace_back();
		else
			items.back() += c;
	}
	return items;
}

// How many devices a File= value names: /dev/nvidia[0-3] is 4.
std::uint32_t device_count(std::string_view file)
{
	std::uint32_t n = 0;
	for (const auto &item : hostlist_items(file)) {
		auto open = item.find('['), close = item.find(']');
		n += open == std::string::npos || close < open
			     ? 1
			     : static_cast<std::uint32_t>(expand_ranges(std::string_view(item).substr(open + 1, close - open - 1)).size());
	}
	return n;
}

} // namespace

std::vector<std::string> hostlist_names(std::string_view list)
{
	std::vector<std::string> names;
	for (const auto &item : hostlist_items(list)) {
		auto open = item.find('['), close = item.find(']');
		if (open == std::string::npos || close < open) {
			if (!item.empty())
				names.push_back(item);
			continue;
		}
		std::string prefix = item.substr(0, open), suffix = item.substr(close + 1);
		for (const auto &n : expand_ranges(std::string_view(item).substr(open + 1, close - open - 1)))
			names.push_back(prefix + n + suffix);
	}
	return names;
}

bool hostlist_has(std::string_view list, std::string_view node)
{
	auto names = hostlist_names(list);
	return std::find(names.begin(), names.end(), node) != names.end();
}

NodeShards node_shards(std::istream &gres_conf, const std::string &node)
{
	std::uint64_t shards = 0, gpus = 0;
	for (std::string line; std::getline(gres_conf, line);) {
		line = line.substr(0, line.find('#'));
		std::string name, count, file, nodes;
		bool for_us = true;
		std::istringstream words(line);
		for (std::string w; words >> w;) {
			auto eq = w.find('=');
			std::string key = w.substr(0, eq), value = eq == std::string::npos ? "" : w.substr(eq + 1);
			if (!strcasecmp(key.c_str(), "NodeName"))
				for_us = hostlist_has(value, node);
			else if (!strcasecmp(key.c_str(), "Name"))
				name = value;
			else if (!strcasecmp(key.c_str(), "Count"))
				count = value;
			else if (!strcasecmp(key.c_str(), "File"))
				file = value;
		}
		if (!for_us || (name != "gpu" && name != "shard"))
			continue;
		std::uint32_t n = file.empty() ? 1 : device_count(file);
		if (!count.empty()) {
			auto c = number(count);
			if (!c)
				return {0, "gres.conf: Count=" + count + " is not a number"};
			n = *c;
		}
		(name == "gpu" ? gpus : shards) += n;
	}
	if (!shards)
		return {};
	if (!gpus)
		return {0, "gres.conf names shards but no GPU devices for node " + node};
	return {static_cast<std::uint32_t>(shards / gpus), ""};
}

StepShards step_shards(std::string_view shards_on_node, std::uint32_t ngpus, const NodeShards &node)
{
	if (!node.reason.empty())
		return {0, 0, node.reason};
	if (shards_on_node.empty())
		return {node.per_gpu, node.per_gpu, ""};	// whole GPUs
	auto held = number(shards_on_node);
	if (!held || !*held || !ngpus)
		return {0, 0, "SLURM_SHARDS_ON_NODE='" + std::string(shards_on_node) + "' is not a shard count"};
	if (!node.per_gpu)
		return {0, 0, "the job holds " + std::string(shards_on_node) + " shards, but gres.conf gives this node none"};
	return {*held / ngpus, node.per_gpu, ""};
}

} // namespace gos::spank
