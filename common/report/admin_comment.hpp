// gpuoversub's own part of a job's AdminComment. Slurm keeps one
// AdminComment per job and replaces it whole on every update, while each
// node of the job has its own figures and a site may keep its own text
// there. So gpuoversub owns one delimited segment, `gpuoversub={...}`, and
// leaves everything around it as it was. The segment holds the job's totals
// and each node's part of each run (a requeued job keeps every run's):
//   gpuoversub={"gos":2,"nodes":["n1","n2"],"missing":[],"peak_dev":..,
//               "parts":[{"node":"n1","run":0,"gpus":["0000:17:00.0"],..},..]}
// No Slurm here, so the unit tests can drive it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/report/report.hpp"

namespace gos::report {

struct AdminComment {
	std::string site;	// everything that is not ours, as it was
	nlohmann::json ours;	// our segment, an object; empty when there is none
};

// Splits AdminComment into the site's text and our segment. A segment that
// does not parse stays in the site's text (it is nobody's we can vouch
// for); the whole-field compact line of gpuoversub before 2 ({"gos":1,..})
// is ours and is dropped.
AdminComment split_admin_comment(const std::string &field);
// The field again: the site's text, a space, our segment.
std::string join_admin_comment(const AdminComment &c);
// One node's part of one run, from its daemon's report.
nlohmann::json node_part(const Report &report, const std::string &node, unsigned run);
// Puts (or replaces) the part of its node and run, and recomputes the
// totals; job_nodes (the job's node names) say which nodes have no part yet.
void merge_part(nlohmann::json &ours, const nlohmann::json &part, const std::vector<std::string> &job_nodes);
// Whether the segment holds exactly this part.
bool holds_part(const nlohmann::json &ours, const nlohmann::json &part);

} // namespace gos::report
