// gpuoversub's own part of a job's AdminComment. Slurm keeps one
// AdminComment per job and replaces it whole on every update, while each
// node of the job has its own figures and a site may keep its own text
// there. So gpuoversub owns one delimited segment, `gpuoversub={...}`, and
// leaves everything around it as it was. Version 2 holds the job's totals
// and each node's part of each run (a requeued job keeps every run's):
//   gpuoversub={"gos":2,"nodes":["n1","n2"],"missing":[],"peak_dev":..,
//               "parts":[{"node":"n1","run":0,"gpus":["0000:17:00.0"],..},..]}
// Version 3 is one run's record, without parts (jobwide_record.hpp).
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
	// A newer release's compressed record ("gpuoversub=z:" and base64),
	// kept as it is: this release cannot read it. (Defaulted, so that
	// {site, ours} initializes the other two.)
	std::string newer{};
};

// Splits AdminComment into the site's text and our segment: version 2
// (with "parts") or 3 and later (a "gos" of 3 or more). A segment that
// does not parse stays in the site's text (it is nobody's we can vouch
// for); the whole-field compact line of gpuoversub before 2 ({"gos":1,..})
// is ours and is dropped.
AdminComment split_admin_comment(const std::string &field);
// The field again: the site's text, a space, a newer release's segment if
// any, a space, our segment.
std::string join_admin_comment(const AdminComment &c);
// One node's part of one run, from its daemon's report.
nlohmann::json node_part(const Report &report, const std::string &node, unsigned run);
// Puts (or replaces) the part of its node and run, and recomputes the
// totals; job_nodes (the job's node names) say which nodes have no part yet.
void merge_part(nlohmann::json &ours, const nlohmann::json &part, const std::vector<std::string> &job_nodes);
// Whether the segment holds exactly this part.
bool holds_part(const nlohmann::json &ours, const nlohmann::json &part);

} // namespace gos::report
