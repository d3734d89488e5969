// The JSON that sites parse, pinned: a job's report (the stored file and
// the REPORT reply), the node's status and its jobs, each made from fixed
// input and compared byte for byte with tests/unit/report/golden/. A change
// to a field's name, type or place shows here first. On a mismatch the test
// prints what it got and writes it to $TMPDIR/gos-golden-NAME, to copy over
// the golden file where the change is meant.
#define BOOST_TEST_MODULE report_golden
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/report/admin_comment.hpp"
#include "common/report/jobwide_record.hpp"
#include "daemon/ctl/job_wide.hpp"
#include "daemon/gpud/daemon.hpp"
#include "daemon/gpud/report.hpp"
#include "common/proto/wire.hpp"
#include "common/status/status.hpp"

namespace gpud = gos::gpud;
namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t MiB = 1ULL << 20;
const fs::path golden_dir = "tests/unit/report/golden";

std::string read_file(const fs::path &p)
{
	std::ifstream in(p);
	std::stringstream s;
	s << in.rdbuf();
	return s.str();
}

// Pretty, in the order and the number forms of the text given.
std::string pretty(const std::string &json)
{
	return nlohmann::ordered_json::parse(json).dump(2) + "\n";
}

void check_golden(const std::string &name, const std::string &got)
{
	std::string want = read_file(golden_dir / name);
	if (got != want) {
		fs::path actual = fs::temp_directory_path() / ("gos-golden-" + name);
		std::ofstream(actual) << got;
		BOOST_ERROR(name << " differs from its golden file; got (also in " << actual.string() << "):\n" << got);
	}
}

struct TempDir {
	fs::path dir;
	TempDir()
	{
		char tmpl[] = "/tmp/gos-golden-XXXXXX";
		BOOST_REQUIRE(::mkdtemp(tmpl));
		dir = tmpl;
	}
	~TempDir() { fs::remove_all(dir); }
};

// A job that ran on two GPUs, with every part of a report filled in.
gpud::Job fixed_job()
{
	gpud::Job j;
	j.id = 77;
	j.uid = 1000;
	j.partition = "gpu";
	j.account = "physics";
	j.qos = "normal";
	j.factor_milli = 1500;
	j.size_limit = 0;
	j.started = 1764100000;
	j.ended = 1764103600;
	j.end_reason = "";
	for (std::uint32_t g : {0u, 3u}) {
		gpud::JobGpu jg;
		jg.node_gpu = g;
		jg.base.peak_resident = (g + 1) * 512 * MiB;
		jg.base.peak_host = (g + 1) * 64 * MiB;
		jg.base.bytes_evicted = (g + 1) * 96 * MiB;
		jg.base.evictions = (g + 1) * 48;
		jg.base.bytes_returned = (g + 1) * 32 * MiB;
		jg.base.returns = (g + 1) * 16;
		jg.base.allocs = 10 + g;
		jg.base.oversub_ns = (g + 1) * 2'500'000'000ull;
		jg.base.throttle_events = g;
		jg.shards = {1, 2, ""};
		j.gpus.push_back(jg);
	}
	for (int i = 0; i < 99; i++)
		j.latency.add(10'000);
	j.latency.add(10'000'000);
	auto &r0 = *j.rank(0, 4242, 2);
	r0.allocs = 12;
	r0.bytes_allocated = 768 * MiB;
	r0.bytes_evicted = 96 * MiB;
	r0.bytes_returned = 32 * MiB;
	r0.advice = 1;
	auto &lone = *j.rank(-1, 4300, 2);
	lone.allocs = 1;
	lone.bytes_allocated = 2 * MiB;
	gpud::MpiRank m;
	m.rank = 0;
	m.local_rank = 0;
	m.managed = true;
	m.pid = 4242;
	m.node = "n1";
	m.device_bytes = 512 * MiB;
	m.host_bytes = 64 * MiB;
	m.evictions = 48;
	m.bytes_evicted = 96 * MiB;
	j.mpi_ranks[0] = m;
	j.mpi_ranks_omitted = 0;
	j.advice_events = 4;
	j.restarts = {{1764101800, {true, false}}};
	j.restarts_omitted = 2;
	return j;
}

std::vector<gpud::Gpu> fixed_gpus()
{
	std::vector<gpud::Gpu> gpus;
	for (std::uint32_t i = 0; i < 4; i++)
		gpus.push_back({i, 16384 * MiB, "0000:1" + std::to_string(i) + ":00.0", static_cast<int>(i / 2), true});
	return gpus;
}

// The report as the daemon finishes it: with the job's weights, from n1.
gos::report::Report fixed_report()
{
	gpud::Job j = fixed_job();
	gos::report::Report rep = gpud::build_report(j, {}, fixed_gpus());
	rep.weights = gpud::weights_of(gos::config::Config{}, j, {});
	rep.node = "n1";	// the host's name otherwise
	return rep;
}

// A node of two simulated GPUs with the userspace engine, in process.
struct Node {
	TempDir t;
	gos::config::Config cfg;
	std::unique_ptr<gpud::Daemon> daemon;

	Node()
	{
		cfg.start.state_dir = (t.dir / "state").string();
		cfg.policy.report_dir = (t.dir / "reports").string();
		cfg.start.reserve = 0;
		cfg.policy.balloon = false;
		gpud::Discovery d;
		for (std::uint32_t i = 0; i < 2; i++)
			d.gpus.push_back({i, 256 * MiB, "0000:0" + std::to_string(i) + ":00.0", 0, true});
		d.source = "simulated";
		gos_config c;
		gos_config_defaults(&c);
		daemon = std::make_unique<gpud::Daemon>(cfg, std::move(d), gpud::userspace_engine(c));
	}

	// The reply's body to one request of root's.
	template <class T>
	std::string ask(std::uint16_t type, const T &payload)
	{
		gos::proto::Bytes out;
		auto id = daemon->open({::getpid(), 0, 0}, [&](gos::proto::Bytes b) { out.insert(out.end(), b.begin(), b.end()); });
		gos::proto::Frame f;
		f.hdr.type = type;
		f.hdr.seq = 1;
		f.payload.assign(reinterpret_cast<const std::uint8_t *>(&payload),
				 reinterpret_cast<const std::uint8_t *>(&payload) + sizeof payload);
		daemon->handle(id, f);
		daemon->close(id);
		gos::proto::Decoder dec;
		dec.feed(out.data(), out.size());
		auto frame = dec.next();
		BOOST_REQUIRE(frame);
		auto rep = gos::proto::decode_reply(*frame);
		BOOST_REQUIRE(rep);
		BOOST_REQUIRE_EQUAL(rep->status, 0);
		return std::string(rep->body.begin(), rep->body.end());
	}
	std::string ask(std::uint16_t type) { return ask(type, std::uint8_t{0}); }
};

// Job 7 of uid 1000 on GPU 1, one task.
void register_job(Node &n)
{
	gos_req_step st{};
	st.job_id = 7;
	st.step_id = 0;
	st.uid = 1000;
	st.ngpus = 1;
	st.gpus[0] = 1;
	n.ask(GOS_REQ_STEP_REGISTER, st);
	gos_req_task task{7, 0, static_cast<std::uint32_t>(::getpid())};
	n.ask(GOS_REQ_TASK_REGISTER, task);
}

} // namespace

BOOST_AUTO_TEST_CASE(the_status_and_jobs_replies_keep_their_form)
{
	Node n;
	register_job(n);
	check_golden("status.json", pretty(n.ask(GOS_REQ_STATUS)));
	auto jobs = nlohmann::ordered_json::parse(n.ask(GOS_REQ_JOBS));
	BOOST_REQUIRE_EQUAL(jobs.size(), 1u);
	BOOST_TEST(jobs[0]["started"].get<std::int64_t>() > 0);
	jobs[0]["started"] = std::int64_t{1764100000};	// when it registered
	check_golden("jobs.json", jobs.dump(2) + "\n");
}

BOOST_AUTO_TEST_CASE(the_stored_report_keeps_its_form)
{
	TempDir t;
	gpud::write_report(t.dir.string(), fixed_report(), true);
	check_golden("report-stored.json", read_file(t.dir / "job-77.json"));
	check_golden("report-summary.txt", read_file(t.dir / "job-77.txt"));
}

BOOST_AUTO_TEST_CASE(the_report_reply_keeps_its_form)
{
	check_golden("report-reply.json", pretty(nlohmann::json(fixed_report()).dump()));
}

// Reports stored by the release before the typed report (the golden file,
// written by that release's writer) read whole, and write back the same.
BOOST_AUTO_TEST_CASE(a_stored_report_of_the_previous_release_reads_whole)
{
	auto stored = read_file(golden_dir / "report-stored.json");
	auto r = nlohmann::json::parse(stored).get<gos::report::Report>();
	BOOST_TEST(r.job == 77u);
	BOOST_TEST(r.gpus.size() == 2u);
	BOOST_TEST(r.gpus[1].pci_bus_id == "0000:13:00.0");
	BOOST_TEST(r.gpus[1].bytes_evicted == 384 * MiB);
	BOOST_TEST(r.daemon_restarts.at(0).gpus.at(0).kept);
	BOOST_TEST(r.weights.has_value());
	BOOST_TEST(r.mpi_ranks.at(0).node == "n1");
	BOOST_TEST(gos::report::stored_report_text(r) == stored);
	BOOST_TEST(gos::report::report_summary(r) == read_file(golden_dir / "report-summary.txt"));
}

// A field a report lacks (written before the field was added) reads as its
// default; one a reader does not know (a later release's) is ignored.
BOOST_AUTO_TEST_CASE(older_and_newer_reports_read)
{
	auto j = nlohmann::json::parse(read_file(golden_dir / "report-stored.json"));
	for (const char *added : {"node", "weights", "mpi_ranks", "mpi_ranks_omitted", "daemon_restarts",
				  "daemon_restarts_omitted", "end_reason"})
		j.erase(added);
	j["a_later_field"] = {{"x", 1}};
	auto r = j.get<gos::report::Report>();
	BOOST_TEST(r.node.empty());
	BOOST_TEST(!r.weights.has_value());
	BOOST_TEST(r.daemon_restarts.empty());
	BOOST_TEST(r.bytes_evicted == 480 * MiB);
	std::string text = gos::report::report_summary(r);
	BOOST_TEST(text.find("gpuoversub report for job 77, GPU 0 (0000:10:00.0)") == 0u, text);
	BOOST_TEST(text.find("weight") == std::string::npos, text);
	BOOST_TEST(nlohmann::json(r).count("a_later_field") == 0u);

	// No job, or a field of another type: no report.
	auto no_job = j;
	no_job.erase("job");
	BOOST_CHECK_THROW(no_job.get<gos::report::Report>(), nlohmann::json::exception);
	auto wrong = j;
	wrong["bytes_evicted"] = "lots";
	BOOST_CHECK_THROW(wrong.get<gos::report::Report>(), nlohmann::json::exception);
}

// gpuoversubctl reads STATUS and JOBS as the daemon writes them.
BOOST_AUTO_TEST_CASE(status_and_jobs_read_back_the_same)
{
	auto status = nlohmann::json::parse(read_file(golden_dir / "status.json")).get<gos::status::Status>();
	BOOST_TEST(status.gpus.at(1).tenants.at(0).job == 7u);
	BOOST_TEST(status.gpus.at(1).tenants.at(0).weight() == 1.0);
	BOOST_TEST(pretty(nlohmann::json(status).dump()) == read_file(golden_dir / "status.json"));
	auto jobs = nlohmann::json::parse(read_file(golden_dir / "jobs.json")).get<std::vector<gos::status::JobStatus>>();
	BOOST_TEST(jobs.at(0).gpus == std::vector<std::uint32_t>{1});
	BOOST_TEST(pretty(nlohmann::json(jobs).dump()) == read_file(golden_dir / "jobs.json"));
}

// The segment of AdminComment that sacct and scontrol show: two nodes' parts
// of the fixed report, beside a site's text.
BOOST_AUTO_TEST_CASE(the_admin_comment_segment_keeps_its_form)
{
	namespace rp = gos::report;
	rp::AdminComment c = rp::split_admin_comment("site: keep me");
	rp::Report r = fixed_report();
	rp::merge_part(c.ours, rp::node_part(r, "n1", 0), {"n1", "n2", "n3"});
	r.end_reason = "node n2 failed";
	rp::merge_part(c.ours, rp::node_part(r, "n2", 0), {"n1", "n2", "n3"});
	check_golden("admin-comment.txt", rp::join_admin_comment(c) + "\n");
}

// The job-wide record of one run (version 3, issue 30): three of six
// nodes' parts of the fixed report, three nodes missing, beside a site's
// text; it reads back to the same record.
BOOST_AUTO_TEST_CASE(the_jobwide_record_keeps_its_form)
{
	namespace rp = gos::report;
	rp::Report r = fixed_report();
	std::vector<rp::NodePart> parts;
	for (const char *node : {"n0001", "n0002", "n0004"}) {
		parts.push_back(rp::node_part(r, node, 1).get<rp::NodePart>());
		r.bytes_evicted /= 2;
		r.end_reason = "daemon restarted";
	}
	rp::JobwideRecord record = rp::build_jobwide_record({123, 1, 1733140000, "n0001", 6, 0}, parts,
								   {"n0006", "n0003", "n0005"});
	rp::AdminComment c = rp::split_admin_comment("site: keep me");
	c.ours = record;
	std::string field = rp::join_admin_comment(c);
	check_golden("admin-comment-v3.txt", field + "\n");
	BOOST_TEST(rp::split_admin_comment(field).site == "site: keep me");
	BOOST_TEST((rp::split_admin_comment(field).ours.get<rp::JobwideRecord>() == record));
}

// gpuoversubctl report's job-wide view (issue 30, step 3), from the golden
// AdminComment fields above as Slurm's clients print them.
namespace job_wide {

namespace ctl = gos::ctl;

std::string field(const char *golden)
{
	std::string f = read_file(golden_dir / golden);
	return f.substr(0, f.find('\n'));
}

// A version 2 segment reads as before this step, from sacct or, when sacct
// has none, from slurmctld.
BOOST_AUTO_TEST_CASE(version_2_keeps_its_text)
{
	ctl::JobWide v = ctl::job_wide_from(field("admin-comment.txt") + "\n", "");
	BOOST_TEST(v.source == "sacct");
	BOOST_TEST(v.runs.empty());
	check_golden("job-wide-v2.txt", ctl::job_wide_text(v));
	ctl::JobWide from_ctld = ctl::job_wide_from("\n", field("admin-comment.txt"));
	BOOST_TEST(from_ctld.source == "slurmctld");
	BOOST_TEST(ctl::job_wide_text(from_ctld).find("job-wide (AdminComment, from slurmctld): nodes n1,n2,n3, 1 run(s)") == 0u);
	// slurmctld is asked only when accounting has no segment at all.
	BOOST_TEST(ctl::job_wide_from(field("admin-comment-v3.txt"), field("admin-comment.txt")).ours.empty());
}

// Two runs of a requeued job, one line each (sacct -D): run 0 lost its
// top evicters to the cap and more missing nodes than its hostlist holds.
BOOST_AUTO_TEST_CASE(version_3_runs_keep_their_text)
{
	std::string run1 = field("admin-comment-v3.txt");
	auto at = run1.find("gpuoversub=") + 11;
	auto run0 = nlohmann::json::parse(run1.substr(at));
	run0["run"] = 0;
	run0["start"] = 1733130000;
	run0["missing_more"] = 40;
	run0["late"] = 1;
	run0["file"] = "job-123.run-0.jobwide.json";
	run0.erase("top");
	ctl::JobWide v = ctl::job_wide_from("site: keep me gpuoversub=" + run0.dump() + "\n" + run1 + "\n", "");
	BOOST_TEST(v.ours.empty());
	BOOST_REQUIRE_EQUAL(v.runs.size(), 2u);
	check_golden("job-wide-v3.txt", ctl::job_wide_text(v));
	// --json: the records as written, in sacct's order.
	auto runs = ctl::job_wide_runs_json(v);
	BOOST_TEST(runs.size() == 2u);
	BOOST_TEST(runs[0] == run0);
	BOOST_TEST(runs[1] == nlohmann::json::parse(run1.substr(at)));
}

// Issue 50, finding 8: an array's id gives every task's record; a job's
// report shows its own runs only, a site's '|' in the field kept.
BOOST_AUTO_TEST_CASE(an_array_tasks_runs_are_its_own)
{
	const std::string v3 = field("admin-comment-v3.txt");
	const std::string sacct = "123|site a|b " + v3 + "\n124|" + v3 + "\n1234|" + v3 + "\n123|\n";
	BOOST_TEST(ctl::own_runs(sacct, 123) == "site a|b " + v3 + "\n\n");
	BOOST_TEST(ctl::job_wide_from(ctl::own_runs(sacct, 123), "").runs.size() == 1u);
	BOOST_TEST(ctl::job_wide_from(ctl::own_runs(sacct, 124), "").runs.size() == 1u);
	BOOST_TEST(ctl::own_runs(sacct, 12).empty());
}

// Every text of a record reaches the terminal escaped.
BOOST_AUTO_TEST_CASE(version_3_text_is_escaped)
{
	std::string seg = R"(gpuoversub={"gos":3,"writer":"n\u001b]0;x\u0007","missing":"m\u001b[2J","file":"f\u001b",)"
			  R"("top":[["t\u001b",1,2]],"ended":{"e\u001b":1}})";
	std::string text = ctl::job_wide_text(ctl::job_wide_from(seg, ""));
	BOOST_TEST(text.find('\x1b') == std::string::npos, text);
	BOOST_TEST(text.find('\a') == std::string::npos, text);
	BOOST_TEST(text.find("written by n\\x1b]0;x\\x07") != std::string::npos, text);
}

// What this release cannot read at all is one line each, never an
// exception; the other runs still print.
BOOST_AUTO_TEST_CASE(records_not_read_are_said_in_a_line)
{
	const std::vector<std::pair<std::string, std::string>> cases = {
		{R"(gpuoversub={"gos":"3","run":1})", "a run's gpuoversub= segment that does not parse"},
		{R"(gpuoversub={"gos":3,"run":1)", "a run's gpuoversub= segment that does not parse"},
		{"gpuoversub=garbage", "a run's gpuoversub= segment that does not parse"},
		{R"(gpuoversub={"gos":4,"run":1})", "a run's record of version 4, written by a newer release"},
		{"site gpuoversub=z:H4sIAAAAAAAA/w==", "a run's record written by a newer release (gpuoversub=z:)"},
	};
	for (const auto &[segment, said] : cases) {
		std::string text = ctl::job_wide_text(ctl::job_wide_from(segment + "\n" + field("admin-comment-v3.txt"), ""));
		BOOST_TEST(text.find("job-wide (AdminComment, from sacct): " + said) == 0u, segment << ":\n" << text);
		BOOST_TEST(text.find('\n') == text.find("job-wide (AdminComment, from sacct): run 1") - 1, text);
	}
	// A record partly read shows what it can, and names the rest (issue
	// 50, finding 7: a null where a number belongs).
	for (const auto &[segment, unread] : std::vector<std::pair<std::string, std::string>>{
		     {R"(gpuoversub={"gos":3,"run":"first","parts":1})", " run"},
		     {R"(gpuoversub={"gos":3,"run":1,"max":{"oversub_s":null},"parts":1})", " max.oversub_s"},
		     {R"(gpuoversub={"gos":3,"run":1,"node":{"evicted":[1]}})", " node.evicted"},
		     {R"(gpuoversub={"gos":3,"run":1,"top":"n1"})", " top"}}) {
		std::string text = ctl::job_wide_text(ctl::job_wide_from(segment, ""));
		BOOST_TEST(text.find("job-wide (AdminComment, from sacct): run ") == 0u, segment << ":\n" << text);
		BOOST_TEST(text.find("  fields not read (of the wrong type), shown as 0 or empty:" + unread + "\n") !=
				   std::string::npos,
			   segment << ":\n" << text);
	}
	// A line with no segment at all is no run of ours.
	BOOST_TEST(ctl::job_wide_from("site only\n\n", "").runs.empty());
}

} // namespace job_wide
