// Anyone's questions: the node's status, its jobs, a job's report and explanation, the request table.
#include <unistd.h>

#include "common/proto/requests.hpp"
#include "common/util/json_text.hpp"
#include "common/util/regular_file.hpp"

#include "daemon/gpud/handlers.hpp"
#include "daemon/gpud/identity.hpp"
#include "daemon/gpud/report.hpp"

namespace gos::gpud {

Answer QueryHandlers::status(Session &)
{
	return {0, {}, json_text(views_.status())};
}

Answer QueryHandlers::jobs(Session &)
{
	return {0, {}, json_text(views_.jobs())};
}

// The request table, and the values of the settings its costs name.
Answer QueryHandlers::requests(Session &)
{
	status::Requests table{GOS_WIRE_VERSION, GOS_WIRE_MAX_PAYLOAD, {}, {}};
	for (const proto::RequestRow &r : proto::request_table())
		table.requests.push_back({r.type, std::string(r.name), std::string(proto::caller_name(r.caller)),
					  std::string(proto::body_name(r.request)), r.request_min, r.request_max,
					  r.request == proto::Body::records ? r.record : 0,
					  std::string(proto::body_name(r.reply)), r.reply_max, std::string(r.cost)});
	const auto &p = cfg_.policy;
	table.caps = {{"max_agents_per_job", p.max_agents_per_job}, {"max_buffers_per_job", p.max_buffers_per_job},
		      {"max_ranks_per_job", p.max_ranks_per_job}, {"max_connections_per_uid", p.max_connections_per_uid},
		      {"host_spill_limit", p.host_spill_limit}};
	return {0, {}, json_text(table)};
}

// Why a running job has its shares.
Answer QueryHandlers::explain(Session &s, const gos_req_job &req)
{
	const Job *job = ledger_.find(req.job_id);
	if (!job || job->ended)
		return {-ENOENT, "job " + std::to_string(req.job_id) + " is not running on this node", {}};
	if (s.peer.uid != 0 && s.peer.uid != job->uid)
		return {-EACCES, "job " + std::to_string(req.job_id) + " belongs to another user", {}};
	return {0, {}, json_text(views_.explain(*job, ledger_.weights(*job), oversub_choice(cfg_, *job)))};
}

// A running job's report so far, or an ended job's from the report directory.
Answer QueryHandlers::report(Session &s, const gos_req_job &req)
{
	std::string refused = "job " + std::to_string(req.job_id) + " belongs to another user";
	if (const Job *job = ledger_.find(req.job_id)) {
		if (!may_read_job(s.peer, job->uid))
			return {-EACCES, refused, {}};
		report::Report rep = build_report(ledger_.folded(*job), {}, gpus_);
		rep.weights = ledger_.weights(*job);	// as the final report has them
		return {0, {}, json_text(rep)};
	}
	// Its owner from its first bytes, before anything else of it is read:
	// a large report of another user's costs them nothing to ask for.
	std::string path = report_path(cfg_.policy.report_dir, req.job_id);
	auto owner = stored_report_owner(path);
	if (!owner && ::access(path.c_str(), F_OK) != 0)
		return {-ENOENT, "no report for job " + std::to_string(req.job_id) + " on this node", {}};
	if (!owner && s.peer.uid != 0)	// one from before owners came first: root's to read
		return {-EACCES, "the stored report for job " + std::to_string(req.job_id) + " does not name its owner first; "
				 "root may read it", {}};
	if (owner && !may_read_job(s.peer, *owner))
		return {-EACCES, refused, {}};
	try {
		auto j = nlohmann::json::parse(read_regular_file(path, {stored_report_max, true}), nullptr, false);
		if (j.is_discarded())
			return {-EIO, "the stored report for job " + std::to_string(req.job_id) + " is unreadable", {}};
		return {0, {}, json_text(j)};
	} catch (const FileRefused &e) {
		return {-EIO, e.what(), {}};
	}
}

} // namespace gos::gpud
