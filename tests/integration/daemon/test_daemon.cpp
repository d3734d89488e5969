// gpuoversubd end to end: a real daemon, agents as real processes speaking
// the protocol, the SPANK side played by this (root) test.
#define BOOST_TEST_MODULE daemon
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "daemon_harness.hpp"
#include "common/proto/client.hpp"

using namespace gos_test;
using nlohmann::json;

namespace {

constexpr std::uint64_t MiB = 1ULL << 20;

std::uint64_t u64(const json &j, const char *key)
{
	return j.is_null() ? 0 : j[key].get<std::uint64_t>();
}

// An agent of `job`, registered as its task and started.
std::unique_ptr<AgentProcess> agent(DaemonUnderTest &d, std::uint64_t job, std::vector<Allocation> allocs,
				    Orders orders = Orders::ack, bool reconnect = false)
{
	AgentScript s;
	s.socket = d.socket;
	s.claim_job = job;
	s.allocs = std::move(allocs);
	s.orders = orders;
	s.reconnect = reconnect;
	auto a = std::make_unique<AgentProcess>(s);
	d.register_task(job, a->pid());
	a->go();
	BOOST_REQUIRE_EQUAL(a->wait_for("hello"), "hello 0 ");
	return a;
}

} // namespace

BOOST_AUTO_TEST_CASE(two_jobs_overcommit_one_gpu_fairly)
{
	DaemonUnderTest d("");
	d.register_step(1);
	d.register_step(2);
	auto a = agent(d, 1, {{800 * MiB}});
	BOOST_TEST(a->wait_for("alloc").find("alloc ") == 0u);
	auto b = agent(d, 2, {{800 * MiB}});
	BOOST_TEST(b->wait_for("alloc").find("alloc ") == 0u);
	BOOST_TEST(a->wait_for("order 1").find("order 1") == 0u);	// A is evicted
	BOOST_REQUIRE(eventually([&] {
		auto ta = d.tenant(1), tb = d.tenant(2);
		return u64(ta, "resident") == 512 * MiB && u64(tb, "resident") == 512 * MiB;
	}));
	auto t = d.tenant(1);
	BOOST_TEST(u64(t, "entitlement") == 512 * MiB);
	BOOST_TEST(u64(t, "host") == 288 * MiB);
	BOOST_TEST(d.status()["gpus"][0]["used"] == 1024 * MiB);
}

BOOST_AUTO_TEST_CASE(the_lowest_priority_buffer_goes_first)
{
	DaemonUnderTest d("");
	d.register_step(1);
	d.register_step(2);
	auto a = agent(d, 1, {{400 * MiB, 12}, {400 * MiB, 2}});
	std::string hot = a->wait_for("alloc"), cold = a->wait_for("alloc");
	std::string cold_buffer = cold.substr(6, cold.find(' ', 6) - 6);
	auto b = agent(d, 2, {{300 * MiB}});
	b->wait_for("alloc");
	std::uint64_t evicted = 0;
	for (std::string o; !(o = a->wait_for("order 1", std::chrono::milliseconds(1500))).empty();) {
		std::istringstream in(o.substr(8));
		std::string buffer;
		std::uint64_t off, len;
		in >> buffer >> off >> len;
		BOOST_TEST(buffer == cold_buffer);
		evicted += len;
		if (evicted >= 76 * MiB)
			break;
	}
	BOOST_TEST(evicted == 76 * MiB);	// 800 + 300 - 1024, all from the cold buffer
}

BOOST_AUTO_TEST_CASE(persistent_oversubscription_throttles_and_advises)
{
	DaemonUnderTest d("advice: {persist: 300ms}\n");
	d.register_step(1);
	d.register_step(2);
	auto b = agent(d, 2, {{512 * MiB}});
	auto a = agent(d, 1, {{1024 * MiB}});
	BOOST_TEST(a->wait_for("order 4", std::chrono::seconds(3)).find("order 4") == 0u);
	BOOST_TEST(d.tenant(1)["throttled"] == true);
	json rep = d.ask(GOS_REQ_REPORT, &(const gos_req_job &)gos_req_job{1}, sizeof(gos_req_job));
	BOOST_TEST(rep["advice_events"].get<int>() >= 1);
	BOOST_TEST(rep["throttle_events"].get<int>() >= 1);
}

BOOST_AUTO_TEST_CASE(kill_9_of_an_agent_releases_its_memory)
{
	DaemonUnderTest d("");
	d.register_step(1);
	d.register_step(2);
	auto a = agent(d, 1, {{800 * MiB}});
	a->wait_for("alloc");
	auto b = agent(d, 2, {{800 * MiB}});
	b->wait_for("alloc");
	BOOST_REQUIRE(eventually([&] { return u64(d.tenant(1), "host") == 288 * MiB; }));
	b->kill9();
	BOOST_REQUIRE(eventually([&] { return u64(d.tenant(2), "demand") == 0; }));
	BOOST_TEST(a->wait_for("order 2").find("order 2") == 0u);	// A's data comes back
	BOOST_TEST(eventually([&] { return u64(d.tenant(1), "host") == 0 && u64(d.tenant(1), "resident") == 800 * MiB; }));
}

BOOST_AUTO_TEST_CASE(an_unresponsive_victim_does_not_block_the_requester)
{
	DaemonUnderTest d("order_timeout: 300ms\n");
	d.register_step(1);
	d.register_step(2);
	auto a = agent(d, 1, {{1024 * MiB}}, Orders::ignore);
	a->wait_for("alloc");
	auto b = agent(d, 2, {{400 * MiB}});
	std::string alloc = b->wait_for("alloc");
	BOOST_TEST(alloc.substr(alloc.rfind(' ') + 1) == std::to_string(400 * MiB));	// all waiting
	auto start = std::chrono::steady_clock::now();
	std::string settled = b->wait_for("order 3", std::chrono::seconds(3));
	BOOST_REQUIRE(!settled.empty());
	BOOST_TEST((std::chrono::steady_clock::now() - start < std::chrono::seconds(2)));
	// The expired order was forfeited (docs/engine.md): the waiting part went
	// to the device, not to the host; the notice's last figure is its host part.
	BOOST_TEST(settled.substr(settled.rfind(' ') + 1) == "0");
	BOOST_TEST(u64(d.tenant(2), "host") == 0u);
	BOOST_TEST(u64(d.tenant(2), "resident") == 400 * MiB);
	BOOST_TEST(u64(d.tenant(1), "expired_orders") >= 1u);
}

BOOST_AUTO_TEST_CASE(a_restart_loses_nothing_and_counts_nothing_twice)
{
	DaemonUnderTest d("");
	d.register_step(7, {0}, 0, 2000, "high");
	d.register_step(8);
	auto a = agent(d, 7, {{600 * MiB}, {100 * MiB}}, Orders::ack, true);
	a->wait_for("alloc");
	a->wait_for("alloc");
	auto b = agent(d, 8, {{600 * MiB}}, Orders::ack, true);
	b->wait_for("alloc");
	BOOST_REQUIRE(eventually([&] { return u64(d.tenant(7), "resident") == 512 * MiB; }));
	std::uint64_t evicted_before = d.ask(GOS_REQ_REPORT, &(const gos_req_job &)gos_req_job{7},
					     sizeof(gos_req_job))["bytes_evicted"];
	BOOST_TEST(evicted_before > 0u);
	// Counters are checkpointed every second: once the record holds the
	// evictions, the worst case: kill -9.
	auto checkpointed = [&] {
		json record = d.saved_record(7);
		if (record.is_null())
			return false;
		std::uint64_t evicted = 0;
		for (const json &g : record["gpus"])
			evicted += g["base"]["bytes_evicted"].get<std::uint64_t>() +
				   g["live"]["bytes_evicted"].get<std::uint64_t>();
		return evicted >= evicted_before;
	};
	BOOST_REQUIRE(eventually(checkpointed, std::chrono::seconds(5)));
	d.stop(SIGKILL);
	d.start();
	BOOST_TEST(a->wait_for("reregistered", std::chrono::seconds(10)) == "reregistered");
	BOOST_TEST(b->wait_for("reregistered", std::chrono::seconds(10)) == "reregistered");
	BOOST_REQUIRE(eventually([&] {
		return u64(d.tenant(7), "demand") == 700 * MiB && u64(d.tenant(8), "demand") == 600 * MiB &&
		       u64(d.tenant(7), "resident") == 512 * MiB;
	}));
	json jobs = d.ask(GOS_REQ_JOBS);
	BOOST_TEST(jobs.size() == 2u);
	BOOST_TEST(jobs[0]["tasks"] == 1);
	BOOST_TEST(eventually([&] { return d.status()["gpus"][0]["used"] == 1024 * MiB; }));
	// Counters from before the restart survive, once.
	json rep = d.ask(GOS_REQ_REPORT, &(const gos_req_job &)gos_req_job{7}, sizeof(gos_req_job));
	BOOST_TEST(rep["bytes_evicted"].get<std::uint64_t>() >= evicted_before);
	BOOST_TEST(rep["qos"] == "high");
	BOOST_TEST(rep["oversub_factor"] == 2.0);
}

BOOST_AUTO_TEST_CASE(job_end_writes_the_report_atomically)
{
	DaemonUnderTest d("");
	d.register_step(5);
	auto a = agent(d, 5, {{300 * MiB}, {2 * MiB}});
	a->wait_for("alloc");
	a->wait_for("alloc");
	a->stop();
	d.end_step(5);
	std::ifstream in(d.report_dir + "/job-5.json");
	BOOST_REQUIRE(in);
	json rep = json::parse(in);
	BOOST_TEST(rep["job"] == 5);
	BOOST_TEST(rep["peak_device_bytes"] == 302 * MiB);
	BOOST_TEST(rep["alloc_latency_us"]["count"] == 2);
	BOOST_TEST(rep["alloc_latency_us"]["p99"].get<double>() > 0);
	BOOST_REQUIRE_EQUAL(rep["ranks"].size(), 1u);
	BOOST_TEST(rep["ranks"][0]["allocs"] == 2);
	std::ifstream txt(d.report_dir + "/job-5.txt");
	std::string first;
	std::getline(txt, first);
	BOOST_TEST(first.rfind("gpuoversub report for job 5 on node ", 0) == 0u);	// it names its node
	BOOST_TEST(rep["node"].get<std::string>().size() > 0u);
	BOOST_TEST(d.ask(GOS_REQ_JOBS).empty());
	BOOST_TEST(!std::ifstream(d.state_dir + "/job-5.json"));	// record gone with the job
	// The finished job's report is still served.
	BOOST_TEST(d.ask(GOS_REQ_REPORT, &(const gos_req_job &)gos_req_job{5}, sizeof(gos_req_job))["job"] == 5);
}

BOOST_AUTO_TEST_CASE(impostors_and_non_root_callers_are_refused)
{
	DaemonUnderTest d("");
	d.register_step(1, {0}, 4242);
	d.register_step(2);
	// A task of job 2 claiming to be in job 1.
	AgentScript s;
	s.socket = d.socket;
	s.claim_job = 1;
	AgentProcess liar(s);
	d.register_task(2, liar.pid());
	liar.go();
	BOOST_TEST(liar.wait_for("hello") == "hello -1 process " + std::to_string(liar.pid()) +
						     " belongs to job 2, not job 1");
	// A process no job registered.
	AgentScript nobody;
	nobody.socket = d.socket;
	AgentProcess stranger(nobody);
	stranger.go();
	BOOST_TEST(stranger.wait_for("hello").find("hello -1 process " + std::to_string(stranger.pid()) +
						   " is not a task of any job") == 0u);
	// A non-root process asking for root-only things, or another user's report.
	BOOST_TEST(as_nobody([&] {
		gos::proto::Client c(d.socket);
		gos_req_step step{};
		step.job_id = 3;
		step.ngpus = 1;
		gos_req_task task{1, 0, static_cast<std::uint32_t>(::getpid())};
		gos_req_job job{1};
		return c.call(GOS_REQ_STEP_REGISTER, step).status == -EPERM &&
		       c.call(GOS_REQ_TASK_REGISTER, task).status == -EPERM &&
		       c.call(GOS_REQ_REPORT, job).status == -EACCES && c.call(GOS_REQ_STATUS).status == 0;
	}));
	BOOST_TEST(d.ask(GOS_REQ_JOBS).size() == 2u);
}

BOOST_AUTO_TEST_CASE(malformed_frames_cut_off_the_sender_only)
{
	DaemonUnderTest d("");
	for (int variant = 0; variant < 4; variant++) {
		gos::proto::Client c(d.socket);
		gos_wire_hdr h{GOS_WIRE_MAGIC, GOS_WIRE_VERSION, GOS_REQ_ALLOC, 1, 3};
		if (variant == 1)
			h.magic = 0x12345678;
		if (variant == 2)
			h = {GOS_WIRE_MAGIC, GOS_WIRE_VERSION, GOS_WIRE_REPLY, 1, sizeof(gos_reply)};
		if (variant == 3)
			h = {GOS_WIRE_MAGIC, GOS_WIRE_VERSION, GOS_REQ_STATUS, 1, 0xffffffff};
		// The daemon may hang up after the header: no SIGPIPE for the test.
		if (::send(c.fd(), &h, sizeof h, MSG_NOSIGNAL) != sizeof h)
			BOOST_FAIL("send");
		char junk[sizeof(gos_reply)] = {};
		(void)::send(c.fd(), junk, sizeof junk, MSG_NOSIGNAL);
		BOOST_CHECK_THROW(c.call(GOS_REQ_STATUS, 2000), gos::proto::ProtocolError);
	}
	// Requests with the wrong state or bad values get clear errors.
	gos::proto::Client c(d.socket);
	gos_req_alloc a{0, 8, 0, 0, MiB};
	auto r = c.call(GOS_REQ_ALLOC, a);
	BOOST_TEST(r.status == -EPERM);
	BOOST_TEST(r.error == "say hello first");
	gos_req_step bad{};
	bad.job_id = 9;
	bad.ngpus = 1;
	bad.gpus[0] = 5;
	std::string why;
	BOOST_TEST(d.request(GOS_REQ_STEP_REGISTER, &bad, sizeof bad, &why) == -EINVAL);
	BOOST_TEST(why == "GPU 5 does not exist on this node (it has 1)");
	BOOST_TEST(d.status()["gpus"].size() == 1u);	// still serving
}

// The peer of a bad frame reads why before the close: a reply with seq 0.
BOOST_AUTO_TEST_CASE(a_bad_frame_gets_its_reason_before_the_close)
{
	DaemonUnderTest d("");
	const std::pair<gos_wire_hdr, std::string> cases[] = {
		{{GOS_WIRE_MAGIC, 9, GOS_REQ_STATUS, 1, 0}, "protocol version 9, this side speaks"},
		{{GOS_WIRE_MAGIC, GOS_WIRE_VERSION, GOS_WIRE_REPLY, 1, GOS_WIRE_MAX_PAYLOAD}, "is sent only by the daemon"},
	};
	for (const auto &[h, reason] : cases) {
		gos::proto::Client c(d.socket);
		if (::send(c.fd(), &h, sizeof h, MSG_NOSIGNAL) != sizeof h)
			BOOST_FAIL("send");
		try {
			c.call(GOS_REQ_STATUS, 5000);
			BOOST_FAIL("a bad frame was answered");
		} catch (const gos::proto::ProtocolError &e) {
			BOOST_TEST_INFO(e.what());
			BOOST_TEST(std::string(e.what()).find("gpuoversubd closed the connection: " ) == 0u);
			BOOST_TEST(std::string(e.what()).find(reason) != std::string::npos);
		}
	}
	BOOST_TEST(d.status()["gpus"].size() == 1u);	// still serving
}

BOOST_AUTO_TEST_CASE(bad_rank_messages_are_refused)
{
	DaemonUnderTest d("");
	d.register_step(5);
	d.register_task(5, ::getpid());
	gos::proto::Client c(d.socket);
	gos_req_hello hello{static_cast<std::uint32_t>(::getpid()), -1, -1, 0, 5};
	BOOST_REQUIRE(c.call(GOS_REQ_HELLO, hello).status == 0);
	gos_req_rank rank{4, 0, 4, 0, "node1"};	// rank 4 of 4
	auto r = c.call(GOS_REQ_RANK, rank);
	BOOST_TEST(r.status == -EINVAL);
	rank = {1, 0, 4, 0, {}};
	std::memset(rank.node, 'x', sizeof rank.node);	// no NUL
	BOOST_TEST(c.call(GOS_REQ_RANK, rank).status == -EINVAL);
	rank = {1, 0, 4, 0, "node1"};
	BOOST_TEST(c.call(GOS_REQ_RANK, rank).status == 0);
	// A report that says 2 records and carries 1.
	struct {
		gos_req_rank_report head;
		gos_rank_record one;
	} report{{2, 0}, {}};
	report.one.rank = 1;
	std::strcpy(report.one.node, "node1");
	BOOST_TEST(c.call(GOS_REQ_RANK_REPORT, report).status == -EINVAL);
	report.head.count = 1;
	BOOST_TEST(c.call(GOS_REQ_RANK_REPORT, report).status == 0);
	BOOST_TEST(d.ask(GOS_REQ_REPORT, &(const gos_req_job &)gos_req_job{5}, sizeof(gos_req_job))["mpi_ranks"][0]["node"] ==
		   "node1");
	// Half a record is not a frame this daemon reads: the sender is cut off.
	gos_wire_hdr h{GOS_WIRE_MAGIC, GOS_WIRE_VERSION, GOS_REQ_RANK_REPORT, 9, sizeof(gos_req_rank_report) + 10};
	char junk[sizeof(gos_req_rank_report) + 10] = {};
	BOOST_REQUIRE(::send(c.fd(), &h, sizeof h, MSG_NOSIGNAL) == sizeof h);
	(void)::send(c.fd(), junk, sizeof junk, MSG_NOSIGNAL);
	BOOST_CHECK_THROW(c.call(GOS_REQ_STATUS, 2000), gos::proto::ProtocolError);
	BOOST_TEST(d.status()["gpus"].size() == 1u);	// still serving
}

BOOST_AUTO_TEST_CASE(bad_policies_are_refused_at_start_and_on_reload)
{
	DaemonUnderTest bad("fairness: fair\n", false);
	BOOST_CHECK_THROW(bad.start(), std::runtime_error);
	BOOST_TEST(bad.log().find("gpuoversub.yaml:8:11: 'fairness' must be one of equal, fcfs, static, weighted") !=
		   std::string::npos);

	DaemonUnderTest nogpu("", false);
	std::ofstream(nogpu.policy) << "socket: " << nogpu.socket << "\n";
	BOOST_CHECK_THROW(nogpu.start(), std::runtime_error);
	BOOST_TEST(nogpu.log().find("no GPU to manage") != std::string::npos);

	DaemonUnderTest d("");
	d.register_step(1, {0}, 0, 0, "high");
	BOOST_TEST(d.tenant(1)["weight"] == 1.0);
	d.write_policy("weights: {qos: {high: 3}}\n");
	d.signal(SIGHUP);
	BOOST_TEST(eventually([&] { return d.tenant(1)["weight"] == 3.0; }));
	d.write_policy("weights: {qos: {high: -3}}\n");
	d.signal(SIGHUP);
	BOOST_TEST(eventually([&] { return d.log().find("reload: keeping the running policy") != std::string::npos; }));
	BOOST_TEST(d.tenant(1)["weight"] == 3.0);
}

// gBalloon: a job whose agent stops reporting GPU activity is judged idle
// and its weight lowered; activity restores it. This test process is the
// agent of job 1.
BOOST_AUTO_TEST_CASE(an_idle_job_is_ballooned_down_and_restored)
{
	DaemonUnderTest d("balloon: {period: 100ms, low: 0.3, high: 0.6, idle_weight: 0.25}\n");
	d.register_step(1, {0}, 0, 2000);	// a factor of 2: its limit is twice its nominal share
	d.register_step(2, {0}, 0, 2000);
	d.register_task(1, ::getpid());
	gos::proto::Client me(d.socket);
	gos_req_hello h{static_cast<std::uint32_t>(::getpid()), 0, 0, 1, 1};
	BOOST_REQUIRE_EQUAL(me.call(GOS_REQ_HELLO, h).status, 0);
	gos_req_alloc a{0, 8, 0, 0, 100 * MiB};
	BOOST_REQUIRE_EQUAL(me.call(GOS_REQ_ALLOC, a).status, 0);
	auto busy_for = [&](std::chrono::milliseconds span) {
		auto end = std::chrono::steady_clock::now() + span;
		while (std::chrono::steady_clock::now() < end) {
			gos_req_activity act{0, 10};
			BOOST_REQUIRE_EQUAL(me.call(GOS_REQ_ACTIVITY, act).status, 0);
			std::this_thread::sleep_for(std::chrono::milliseconds(30));
		}
	};
	busy_for(std::chrono::milliseconds(1000));
	BOOST_TEST(d.tenant(1)["idle"] == false);
	BOOST_TEST(d.tenant(1)["weight"] == 1.0);
	std::uint64_t limit = u64(d.tenant(1), "limit");
	BOOST_TEST(limit > 0u);
	BOOST_TEST(eventually([&] { return d.tenant(1)["idle"] == true; }, std::chrono::seconds(3)));
	BOOST_TEST(d.tenant(1)["weight"] == 0.25);
	BOOST_TEST(u64(d.tenant(1), "limit") == limit);	// idle lowers who keeps memory, not what it may ask
	gos_req_alloc more{0, 8, 0, 0, limit - 100 * MiB};
	BOOST_TEST(me.call(GOS_REQ_ALLOC, more).status == 0);
	busy_for(std::chrono::milliseconds(1000));
	BOOST_TEST(d.tenant(1)["idle"] == false);
	BOOST_TEST(d.tenant(1)["weight"] == 1.0);
	gos_req_activity wrong{3, 1};
	BOOST_TEST(me.call(GOS_REQ_ACTIVITY, wrong).status == -EINVAL);
}

// Prometheus conventions: each family once, with HELP and TYPE before its
// samples; units in the names; counters end in _total.
BOOST_AUTO_TEST_CASE(the_prometheus_textfile_is_written)
{
	DaemonUnderTest probe("", false);
	std::string file = probe.dir + "/metrics.prom";
	DaemonUnderTest d("exporter: {textfile: " + file + ", period: 100ms}\nhost_spill_limit: 4G\n");
	d.register_step(3);
	auto a = agent(d, 3, {{64 * MiB}});
	a->wait_for("alloc");
	auto text = [&] {
		std::stringstream ss;
		ss << std::ifstream(file).rdbuf();
		return ss.str();
	};
	BOOST_REQUIRE(eventually(
		[&] { return text().find("gpuoversub_job_resident_bytes{job=\"3\",gpu=\"0\"} 67108864\n") != std::string::npos; }));
	std::string metrics = text();
	for (const char *sample : {"gpuoversub_gpu_capacity_bytes{gpu=\"0\"} 1073741824\n",
				   "gpuoversub_gpu_used_bytes{gpu=\"0\"} 67108864\n",
				   "gpuoversub_gpu_external_bytes{gpu=\"0\"} 0\n",
				   "gpuoversub_job_host_bytes{job=\"3\",gpu=\"0\"} 0\n",
				   "gpuoversub_job_entitlement_bytes{job=\"3\",gpu=\"0\"} ",
				   "gpuoversub_job_throttled{job=\"3\",gpu=\"0\"} 0\n",
				   "gpuoversub_job_evicted_bytes_total{job=\"3\",gpu=\"0\"} 0\n",
				   "gpuoversub_job_returned_bytes_total{job=\"3\",gpu=\"0\"} 0\n",
				   "gpuoversub_job_oversubscribed_seconds_total{job=\"3\",gpu=\"0\"} 0.000000000\n",
				   "gpuoversub_node_host_bytes 0\n", "gpuoversub_node_host_spill_limit_bytes 4294967296\n",
				   "# TYPE gpuoversub_job_evicted_bytes_total counter\n",
				   "# TYPE gpuoversub_gpu_capacity_bytes gauge\n"})
		BOOST_TEST(metrics.find(sample) != std::string::npos, "missing: " << sample);
	std::set<std::string> typed;
	std::string family;
	std::istringstream lines(metrics);
	for (std::string line; std::getline(lines, line);) {
		std::istringstream words(line);
		std::string first, second, name;
		words >> first >> second >> name;
		if (first == "#") {
			if (second == "HELP")
				family = name;
			else
				BOOST_TEST((second == "TYPE" && name == family && typed.insert(family).second), line);
			continue;
		}
		std::string sample = first.substr(0, first.find('{'));
		BOOST_TEST((sample == family && typed.count(family)), "sample outside its family: " << line);
		bool counter = metrics.find("# TYPE " + sample + " counter\n") != std::string::npos;
		BOOST_TEST(counter == (sample.size() > 6 && sample.substr(sample.size() - 6) == "_total"), line);
	}
	BOOST_TEST(typed.size() == 19u);	// 12, and the job-wide channel's 7
}

// A full disk at job end: the daemon keeps serving, keeps the job as
// "report pending", and writes the report once space returns.
BOOST_AUTO_TEST_CASE(a_full_disk_delays_the_report_and_loses_nothing)
{
	DaemonUnderTest d("", false);
	::mkdir(d.report_dir.c_str(), 0755);
	// mode: a fresh tmpfs is 1777, which the daemon refuses as its directory.
	std::string mount = "mount -t tmpfs -o size=64k,mode=0755 gos-test " + d.report_dir;
	BOOST_REQUIRE_MESSAGE(std::system(mount.c_str()) == 0, "needs root to mount a small tmpfs");
	// Lazy: the daemon, stopped after this guard, still holds the
	// directory open; a plain umount failed busy and left one mount
	// behind per run.
	struct Unmount {
		std::string dir;
		~Unmount() { BOOST_CHECK(std::system(("umount --lazy " + dir).c_str()) == 0); }
	} unmount{d.report_dir};
	BOOST_REQUIRE_EQUAL(std::system(("dd if=/dev/zero of=" + d.report_dir + "/filler bs=4k count=64 2>/dev/null").c_str()) >> 8, 1);
	d.start();
	d.register_step(5);
	auto a = agent(d, 5, {{100 * MiB}});
	a->wait_for("alloc");
	a->stop();
	d.end_step(5);
	BOOST_TEST(d.log().find("report for job 5 not written") != std::string::npos);
	json jobs = d.ask(GOS_REQ_JOBS);
	BOOST_REQUIRE_EQUAL(jobs.size(), 1u);
	BOOST_TEST(jobs[0]["report_pending"] == true);
	BOOST_TEST(d.status()["gpus"][0]["tenants"].empty());	// its memory is free
	gos_req_step again{};
	again.job_id = 5;
	again.ngpus = 1;
	std::string why;
	BOOST_TEST(d.request(GOS_REQ_STEP_REGISTER, &again, sizeof again, &why) == -EBUSY);
	::unlink((d.report_dir + "/filler").c_str());
	BOOST_REQUIRE(eventually([&] { return d.ask(GOS_REQ_JOBS).empty(); }, std::chrono::seconds(5)));
	std::ifstream in(d.report_dir + "/job-5.json");
	BOOST_REQUIRE(in);
	BOOST_TEST(json::parse(in)["peak_device_bytes"] == 100 * MiB);
}
