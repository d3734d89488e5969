// One run's parts at its writer (docs/jobwide.md, "The wait and the one
// write"): the run's nodes from its SLURM_NODELIST, the first part each
// node sent, and, once the wait is over, the record of what came and the
// job-wide file that keeps every part whole. The door has checked who sent
// a part before it gets here; this only says whether the run takes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/report/jobwide_record.hpp"

namespace gos::gpud {

// What a run did with a part.
enum class PartTaken {
	kept,		// the node's first, while the run waits
	dup,		// the node has one already: the first counts
	not_in_run,	// the node is not in the run's node list
	late,		// the node's first, after the record was made: the file only
};
std::string_view name_of(PartTaken taken);

// A part the door refused for this run, for the job-wide file.
struct PartRefusal {
	std::string node, peer, reason;
};

class JobwideRun {
public:
	// At most this many refusals are kept for the file; the rest are counted.
	static constexpr std::size_t kept_refusals = 64;

	// FACTS.nodes becomes the count of distinct NODES (the run's expanded
	// node list, in its order; a repeat counts once). Throws
	// std::invalid_argument for an empty list or an empty name.
	JobwideRun(report::RunFacts facts, const std::vector<std::string> &nodes);

	// PART, sent by its node as SENT (the JSON the credential carried).
	PartTaken take(const report::NodePart &part, const nlohmann::json &sent);
	void refused(PartRefusal refusal);

	// Whether NODE is in the run's node list.
	bool has(const std::string &node) const { return index_.count(node) != 0; }
	// Every node has sent its part.
	bool complete() const { return kept_ == nodes_.size(); }
	// The nodes without a part, in node-list order.
	std::vector<std::string> missing() const;

	// Ends the wait: the record of the parts kept so far. A part taken from
	// now on is late.
	report::JobwideRecord close(const report::RecordLimits &limits = {});
	bool closed() const { return closed_; }

	// The job-wide file: the facts, every part as sent (late ones marked),
	// the missing nodes, the refusals, and FIELD, the segment written (or
	// empty where none was).
	nlohmann::json file(std::string_view field) const;

	const report::RunFacts &facts() const { return facts_; }

private:
	struct Received {
		report::NodePart part;
		nlohmann::json sent;
		bool late = false;
	};

	report::RunFacts facts_;
	std::vector<std::string> nodes_;	// distinct, in node-list order
	std::unordered_map<std::string, std::size_t> index_;	// name: its place in nodes_
	std::vector<std::optional<Received>> parts_;	// by place in nodes_
	std::size_t kept_ = 0;	// parts that came in the wait
	std::vector<PartRefusal> refusals_;
	std::uint64_t refusals_more_ = 0;
	bool closed_ = false;
};

} // namespace gos::gpud
