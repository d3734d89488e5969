#include "daemon/gpud/jobwide_run.hpp"

#include <stdexcept>
#include <utility>

namespace gos::gpud {

std::string_view name_of(PartTaken taken)
{
	switch (taken) {
	case PartTaken::kept:
		return "kept";
	case PartTaken::dup:
		return "dup";
	case PartTaken::not_in_run:
		return "not_in_run";
	case PartTaken::late:
		return "late";
	}
	return "unknown";
}

JobwideRun::JobwideRun(report::RunFacts facts, const std::vector<std::string> &nodes) : facts_(std::move(facts))
{
	for (const std::string &node : nodes) {
		if (node.empty())
			throw std::invalid_argument("a run's node list holds an empty name");
		if (index_.emplace(node, nodes_.size()).second)
			nodes_.push_back(node);
	}
	if (nodes_.empty())
		throw std::invalid_argument("a run's node list is empty");
	parts_.resize(nodes_.size());
	facts_.nodes = nodes_.size();
}

PartTaken JobwideRun::take(const report::NodePart &part, const nlohmann::json &sent)
{
	auto at = index_.find(part.node);
	if (at == index_.end())
		return PartTaken::not_in_run;
	std::optional<Received> &slot = parts_[at->second];
	if (slot)
		return PartTaken::dup;
	slot = Received{part, sent, closed_};
	if (closed_) {
		facts_.late++;
		return PartTaken::late;
	}
	kept_++;
	return PartTaken::kept;
}

void JobwideRun::refused(PartRefusal refusal)
{
	if (refusals_.size() < kept_refusals)
		refusals_.push_back(std::move(refusal));
	else
		refusals_more_++;
}

std::vector<std::string> JobwideRun::missing() const
{
	std::vector<std::string> out;
	for (std::size_t i = 0; i < nodes_.size(); i++)
		if (!parts_[i] || parts_[i]->late)
			out.push_back(nodes_[i]);
	return out;
}

report::JobwideRecord JobwideRun::close(const report::RecordLimits &limits)
{
	closed_ = true;
	std::vector<report::NodePart> in_time;
	in_time.reserve(kept_);
	for (const std::optional<Received> &slot : parts_)
		if (slot && !slot->late)
			in_time.push_back(slot->part);
	return report::build_jobwide_record(facts_, in_time, missing(), limits);
}

nlohmann::json JobwideRun::file(std::string_view field) const
{
	nlohmann::json parts = nlohmann::json::array(), late = nlohmann::json::array();
	for (const std::optional<Received> &slot : parts_)
		if (slot)
			(slot->late ? late : parts).push_back(slot->sent);
	nlohmann::json refusals = nlohmann::json::array();
	for (const PartRefusal &r : refusals_)
		refusals.push_back({{"node", r.node}, {"peer", r.peer}, {"reason", r.reason}});
	return {
		{"job", facts_.job},
		{"run", facts_.run},
		{"start", facts_.start},
		{"writer", facts_.writer},
		{"nodes", nodes_.size()},
		{"parts", std::move(parts)},
		{"late", std::move(late)},
		{"missing", missing()},
		{"refused", std::move(refusals)},
		{"refused_more", refusals_more_},
		{"field", field},
	};
}

} // namespace gos::gpud
