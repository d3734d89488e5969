// Shares from shards and `explain`, against a real daemon: the SPANK side
// (step registrations with shards) played by this (root) test.
#define BOOST_TEST_MODULE explain
#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "common/proto/client.hpp"
#include "daemon_harness.hpp"

using namespace gos_test;
using nlohmann::json;

namespace {

void register_shards(DaemonUnderTest &d, std::uint64_t job, std::uint32_t held, std::uint32_t total,
		     const char *reason = "", std::uint32_t uid = 0)
{
	gos_req_step s{};
	s.job_id = job;
	s.uid = uid;
	s.ngpus = 1;
	s.shards_held[0] = held;
	s.shards_total[0] = total;
	std::strncpy(s.shards_reason, reason, sizeof s.shards_reason - 1);
	std::strncpy(s.partition, "gpu", sizeof s.partition - 1);
	std::string why;
	BOOST_REQUIRE_MESSAGE(d.request(GOS_REQ_STEP_REGISTER, &s, sizeof s, &why) == 0, why);
}

// What gpuoversubctl prints for `COMMAND JOB` (report, explain).
std::string ctl_text(DaemonUnderTest &d, const std::string &command, std::uint64_t job)
{
	const char *build = std::getenv("BUILD");
	std::string cmd = std::string(build && *build ? build : "build") + "/bin/gpuoversubctl --socket " + d.socket +
			  " " + command + " " + std::to_string(job) + " 2>&1";
	std::string out;
	FILE *p = ::popen(cmd.c_str(), "r");
	BOOST_REQUIRE(p);
	char buf[4096];
	for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;)
		out.append(buf, n);
	BOOST_TEST(::pclose(p) == 0, out);
	return out;
}

json explain(DaemonUnderTest &d, std::uint64_t job)
{
	gos_req_job req{job};
	return d.ask(GOS_REQ_EXPLAIN, &req, sizeof req);
}

} // namespace

BOOST_AUTO_TEST_CASE(shards_set_the_weights_and_explain_says_how)
{
	DaemonUnderTest d("");
	register_shards(d, 1, 3, 4);
	register_shards(d, 2, 1, 4);
	BOOST_TEST(d.tenant(1)["weight"].get<double>() == 0.75);
	BOOST_TEST(d.tenant(2)["weight"].get<double>() == 0.25);
	json e = explain(d, 1);
	BOOST_TEST(e["partition"] == "gpu");
	json g = e["gpus"][0];
	BOOST_TEST(g["weight"] == d.tenant(1)["weight"]);	// explain matches the status
	BOOST_TEST(g["entitlement"] == d.tenant(1)["entitlement"]);
	BOOST_TEST(g["derivation"][0]["fact"] == "shards");
	BOOST_TEST(g["derivation"][0]["why"] == "3 of 4 shards");
	// No Slurm here: the QOS Priority counts but was never read, and says why.
	BOOST_TEST(g["derivation"][2]["why"].get<std::string>().rfind("(none): Slurm's QOS Priority unknown", 0) == 0,
		   g["derivation"][2]["why"]);
	// ... its own reason only, not the partition's too.
	BOOST_TEST(g["derivation"][2]["why"].get<std::string>().find("PriorityJobFactor") == std::string::npos,
		   g["derivation"][2]["why"]);
	BOOST_TEST(g["entitlement_why"] == "asks for no more than its weighted share: entitled to all it asks");
}

BOOST_AUTO_TEST_CASE(garbled_shards_weigh_1_and_the_reason_is_shown)
{
	DaemonUnderTest d("");
	register_shards(d, 1, 0, 0, "SLURM_SHARDS_ON_NODE='x' is not a shard count");
	register_shards(d, 2, 9, 4);
	BOOST_TEST(d.tenant(1)["weight"].get<double>() == 1.0);
	BOOST_TEST(d.tenant(2)["weight"].get<double>() == 1.0);
	BOOST_TEST(explain(d, 1)["gpus"][0]["derivation"][0]["why"] == "unknown: SLURM_SHARDS_ON_NODE='x' is not a shard count");
	BOOST_TEST(explain(d, 2)["gpus"][0]["derivation"][0]["why"] == "unknown: the plugin sent 9 of 4 shards");
}

BOOST_AUTO_TEST_CASE(explain_refuses_unknown_jobs_and_other_users)
{
	DaemonUnderTest d("");
	register_shards(d, 1, 1, 4, "", 0);
	std::string why;
	gos_req_job unknown{42};
	BOOST_TEST(d.request(GOS_REQ_EXPLAIN, &unknown, sizeof unknown, &why) == -ENOENT);
	BOOST_TEST(why == "job 42 is not running on this node");
	BOOST_TEST(as_nobody([&] {
		auto rep = gos::proto::Client(d.socket).call(GOS_REQ_EXPLAIN, gos_req_job{1});
		return rep.status == -EACCES && rep.error == "job 1 belongs to another user";
	}));
}

BOOST_AUTO_TEST_CASE(gpuoversubctl_prints_the_derivation_in_report_and_explain)
{
	DaemonUnderTest d("");
	register_shards(d, 1, 3, 4);
	std::string derivation = "  GPU 0 weight 0.75: shards x0.75 (3 of 4 shards); partition x1 (gpu: ";
	std::string running = ctl_text(d, "report", 1);
	BOOST_TEST(running.find(derivation) != std::string::npos, running);
	gos_req_job end{1};
	BOOST_REQUIRE(d.request(GOS_REQ_JOB_END, &end, sizeof end) == 0);
	BOOST_REQUIRE(eventually([&] { return std::ifstream(d.report_dir + "/job-1.json").good(); }));
	std::string ended = ctl_text(d, "report", 1);	// from the report file
	BOOST_TEST(ended.find(derivation) != std::string::npos, ended);
	register_shards(d, 2, 1, 4);
	std::string explained = ctl_text(d, "explain", 2);
	BOOST_TEST(explained.find("--gpu-mem-oversub on; ceiling on FACTOR 4 (max_oversub); a job here that gives "
				  "none gets off (default_oversub)") != std::string::npos,
		   explained);
}
