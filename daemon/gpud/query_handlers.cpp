// Anyone's questions: the node's status, its jobs, a job's report and explanation.
#include <fstream>

#include "daemon/gpud/handlers.hpp"
#include "daemon/gpud/identity.hpp"
#include "daemon/gpud/report.hpp"

namespace gos::gpud {

Reply QueryHandlers::status(Session &, const proto::Frame &)
{
	return {0, {}, views_.status().dump()};
}

Reply QueryHandlers::jobs(Session &, const proto::Frame &)
{
	return {0, {}, views_.jobs().dump()};
}

// Why a running job has its shares.
Reply QueryHandlers::explain(Session &s, const proto::Frame &f)
{
	gos_req_job req;
	if (auto why = proto::decode(f, req))
		return {-EINVAL, *why, {}};
	const Job *job = ledger_.find(req.job_id);
	if (!job || job->ended)
		return {-ENOENT, "job " + std::to_string(req.job_id) + " is not running on this node", {}};
	if (s.peer.uid != 0 && s.peer.uid != job->uid)
		return {-EACCES, "job " + std::to_string(req.job_id) + " belongs to another user", {}};
	return {0, {}, views_.explain(*job, ledger_.weights(*job), oversub_json(cfg_, *job)).dump()};
}

// A running job's report so far, or an ended job's from the report directory.
Reply QueryHandlers::report(Session &s, const proto::Frame &f)
{
	gos_req_job req;
	if (auto why = proto::decode(f, req))
		return {-EINVAL, *why, {}};
	std::string refused = "job " + std::to_string(req.job_id) + " belongs to another user";
	if (const Job *job = ledger_.find(req.job_id)) {
		if (!may_read_job(s.peer, job->uid))
			return {-EACCES, refused, {}};
		nlohmann::json rep = build_report(ledger_.folded(*job), {}, gpus_);
		rep["weights"] = ledger_.weights(*job);	// as the final report has them
		return {0, {}, rep.dump()};
	}
	std::ifstream in(cfg_.policy.report_dir + "/job-" + std::to_string(req.job_id) + ".json");
	if (!in)
		return {-ENOENT, "no report for job " + std::to_string(req.job_id) + " on this node", {}};
	auto j = nlohmann::json::parse(in, nullptr, false);
	if (j.is_discarded())
		return {-EIO, "the stored report for job " + std::to_string(req.job_id) + " is unreadable", {}};
	if (!may_read_job(s.peer, j.value("uid", 0u)))
		return {-EACCES, refused, {}};
	return {0, {}, j.dump()};
}

} // namespace gos::gpud
