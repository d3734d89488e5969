// Anyone's questions: the node's status, its jobs, a job's report and explanation.
#include <unistd.h>

#include "common/util/regular_file.hpp"

#include "daemon/gpud/handlers.hpp"
#include "daemon/gpud/identity.hpp"
#include "daemon/gpud/report.hpp"

namespace gos::gpud {

Reply QueryHandlers::status(Session &, const proto::Frame &)
{
	return {0, {}, nlohmann::json(views_.status()).dump()};
}

Reply QueryHandlers::jobs(Session &, const proto::Frame &)
{
	return {0, {}, nlohmann::json(views_.jobs()).dump()};
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
		report::Report rep = build_report(ledger_.folded(*job), {}, gpus_);
		rep.weights = ledger_.weights(*job).get<std::vector<report::GpuWeight>>();	// as the final report has them
		return {0, {}, nlohmann::json(rep).dump()};
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
		return {0, {}, j.dump()};
	} catch (const FileRefused &e) {
		return {-EIO, e.what(), {}};
	}
}

} // namespace gos::gpud
