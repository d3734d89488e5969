// Slurm's fairness facts: the facts program's output parsed, garbled lines
// included; the cache, which keeps the last values read when Slurm cannot
// be read and says so once; the program run with its deadline; the
// slurm_weights policy block; the weight the facts make.
#define BOOST_TEST_MODULE slurm_facts
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "common/config/config.hpp"
#include "daemon/gpud/jobs.hpp"
#include "daemon/gpud/policy.hpp"
#include "daemon/gpud/slurm_facts.hpp"
#include "tests/unit/common/config_error.hpp"

using namespace gos;
using namespace std::chrono_literals;

namespace {

// Polls cond until it holds or 5 s pass.
template <class Cond>
bool eventually(Cond cond)
{
	for (auto until = std::chrono::steady_clock::now() + 5s; std::chrono::steady_clock::now() < until;) {
		if (cond())
			return true;
		std::this_thread::sleep_for(1ms);
	}
	return cond();
}

// Answers each reading with the next scripted output; "!why" throws why.
// The last one repeats.
struct ScriptedSlurm {
	std::mutex mu;
	std::deque<std::string> answers;
	std::vector<bool> fairshare_asked;
	std::set<std::uint64_t> jobs_asked;	// by the latest reading

	ScriptedSlurm() = default;
	explicit ScriptedSlurm(const std::string &first) { answers.push_back(first); }

	void push(const std::string &a)
	{
		std::lock_guard lock(mu);
		answers.push_back(a);
	}
	gpud::SlurmFacts::Reader reader()
	{
		return [this](const gpud::FactsQuery &q, std::stop_token) {
			std::lock_guard lock(mu);
			fairshare_asked.push_back(q.fairshare);
			jobs_asked = q.jobs;
			std::string a = answers.front();
			if (answers.size() > 1)
				answers.pop_front();
			if (!a.empty() && a[0] == '!')
				throw std::runtime_error(a.substr(1));
			return a;
		};
	}
};

struct Logged {
	std::mutex mu;
	std::vector<std::string> lines;
	gpud::SlurmFacts::Logger logger()
	{
		return [this](const std::string &l) {
			std::lock_guard lock(mu);
			lines.push_back(l);
		};
	}
	std::size_t count()
	{
		std::lock_guard lock(mu);
		return lines.size();
	}
};

config::SlurmWeights every_100ms()
{
	config::SlurmWeights w;
	w.refresh_ns = 100'000'000;
	return w;
}

// The next reading, now rather than at the next refresh.
void read_again(gpud::SlurmFacts &facts, const config::SlurmWeights &w)
{
	std::uint64_t before = facts.readings();
	facts.configure(w);
	BOOST_REQUIRE(eventually([&] { return facts.readings() > before; }));
}

const std::string healthy = "partition debug 1\npartition gpu 4\nqos normal 0\nqos high 300\n";

// A cache over a scripted Slurm, refreshed every 100 ms, that has read the
// healthy facts once.
struct HealthyStart {
	ScriptedSlurm slurm{healthy};
	Logged log;
	config::SlurmWeights w = every_100ms();
	gpud::SlurmFacts facts{w, slurm.reader(), log.logger()};
	HealthyStart() { BOOST_REQUIRE(eventually([&] { return facts.readings() >= 1; })); }
};

} // namespace

BOOST_AUTO_TEST_CASE(the_facts_programs_lines_are_parsed)
{
	gpud::SlurmReading r = gpud::parse_slurm_facts(healthy + "fairshare acct1 alice 0.25\n"
							   "unavailable fairshare slurmctld: Unable to contact slurm controller\n");
	BOOST_TEST(r.partition_factor.at("gpu") == 4u);
	BOOST_TEST(r.qos_priority.at("high") == 300u);
	BOOST_TEST(r.qos_priority.at("normal") == 0u);
	BOOST_TEST(r.fairshare.at({"acct1", "alice"}) == 0.25);
	BOOST_TEST(r.unavailable.at("fairshare") == "slurmctld: Unable to contact slurm controller");
	BOOST_TEST(r.garbled.empty());
}

BOOST_AUTO_TEST_CASE(garbled_lines_are_set_aside_not_guessed)
{
	gpud::SlurmReading r = gpud::parse_slurm_facts("partition debug lots\npartition gpu -4\npartition x 1 2\n"
						       "qos high 99999999999\nqos\nfairshare a u 1.5\nfairshare a u nan\n"
						       "wat\n\nqos ok 7\n");
	BOOST_TEST(r.partition_factor.empty());
	BOOST_TEST(r.qos_priority.size() == 1u);
	BOOST_TEST(r.qos_priority.at("ok") == 7u);
	BOOST_TEST(r.fairshare.empty());
	BOOST_TEST(r.garbled.size() == 8u);
	BOOST_TEST(r.garbled.front() == "partition debug lots");
}

BOOST_AUTO_TEST_CASE(the_jobs_lines_are_parsed_and_garbled_ones_set_aside)
{
	gpud::SlurmReading r = gpud::parse_slurm_facts("job 5 running RUNNING\njob 6 finished COMPLETED\njob 7 unknown\n"
						       "unavailable jobs slurmctld: Unable to contact slurm controller\n"
						       "job 0 unknown\njob x running RUNNING\njob 8 done COMPLETED\n"
						       "job 9 finished\njob 10 unknown COMPLETED\njob 11 running A B\n");
	BOOST_TEST(r.jobs.size() == 3u);
	BOOST_TEST((r.jobs.at(5) == gpud::SlurmJobLine{false, "RUNNING"}));
	BOOST_TEST((r.jobs.at(6) == gpud::SlurmJobLine{true, "COMPLETED"}));
	BOOST_TEST((r.jobs.at(7) == gpud::SlurmJobLine{true, "unknown to slurmctld"}));
	BOOST_TEST(r.unavailable.at("jobs") == "slurmctld: Unable to contact slurm controller");
	BOOST_TEST(r.garbled.size() == 6u);
}

BOOST_FIXTURE_TEST_CASE(the_watched_jobs_are_read_and_slurm_unreachable_is_said_once, HealthyStart)
{
	BOOST_TEST((facts.job(5).is == gpud::SlurmJob::Is::unasked));
	facts.watch({5, 6, 7, 8});
	slurm.push(healthy + "job 5 running RUNNING\njob 6 finished COMPLETED\njob 7 unknown\n");
	read_again(facts, w);
	read_again(facts, w);	// the reading after the one the push raced with
	{
		std::lock_guard lock(slurm.mu);
		BOOST_TEST((slurm.jobs_asked == std::set<std::uint64_t>{5, 6, 7, 8}));
	}
	auto now = static_cast<std::int64_t>(std::time(nullptr));
	BOOST_TEST((facts.job(5).is == gpud::SlurmJob::Is::running));
	gpud::SlurmJob done = facts.job(6);
	BOOST_TEST((done.is == gpud::SlurmJob::Is::finished));
	BOOST_TEST(done.state == "COMPLETED");
	BOOST_TEST(std::abs(done.finished_since - now) <= 2);
	BOOST_TEST(facts.job(7).state == "unknown to slurmctld");
	BOOST_TEST((facts.job(8).is == gpud::SlurmJob::Is::unasked));	// asked, not answered
	BOOST_TEST(log.count() == 0u);

	slurm.push(healthy + "unavailable jobs slurmctld: Unable to contact slurm controller\n");
	read_again(facts, w);
	read_again(facts, w);
	read_again(facts, w);
	gpud::SlurmJob away = facts.job(6);
	BOOST_TEST((away.is == gpud::SlurmJob::Is::unreachable));
	BOOST_TEST(away.reason == "slurmctld: Unable to contact slurm controller");
	BOOST_REQUIRE(log.count() == 1u);
	BOOST_TEST(log.lines[0] == "Slurm facts: cannot read jobs (slurmctld: Unable to contact slurm controller); "
				   "no job is ended on Slurm's word");

	slurm.push(healthy + "job 6 finished COMPLETED\n");
	read_again(facts, w);
	read_again(facts, w);
	BOOST_TEST(facts.job(6).finished_since == done.finished_since);	// since first read so
	BOOST_REQUIRE(log.count() == 2u);
	BOOST_TEST(log.lines[1] == "Slurm facts: jobs read again");
	facts.watch({5});
	BOOST_TEST((facts.job(6).is == gpud::SlurmJob::Is::unasked));	// no longer the daemon's
}

// Issue 24, finding 5: the names a job is weighed by are slurmctld's, read
// with its state, and asked for as soon as the job registers, rather than
// at the next refresh (a minute by default).
BOOST_AUTO_TEST_CASE(a_new_jobs_names_are_slurmctlds_and_read_at_once)
{
	gpud::SlurmReading r = gpud::parse_slurm_facts("job 5 running RUNNING\nnames 5 gpu acct1 high\nnames 6 debug - -\n"
						       "names 7 gpu acct1\nnames 0 a b c\nnames 8 a b c d\n");
	BOOST_TEST((r.names.at(5) == gpud::SlurmNames{"gpu", "acct1", "high"}));
	BOOST_TEST((r.names.at(6) == gpud::SlurmNames{"debug", "", ""}));
	BOOST_TEST(r.names.size() == 2u);
	BOOST_TEST(r.garbled.size() == 3u);

	ScriptedSlurm slurm{healthy + "job 5 running RUNNING\nnames 5 gpu acct1 high\n"};
	Logged log;
	config::SlurmWeights hourly;
	hourly.refresh_ns = 3'600'000'000'000ULL;
	gpud::SlurmFacts facts{hourly, slurm.reader(), log.logger()};
	BOOST_REQUIRE(eventually([&] { return facts.readings() >= 1; }));
	std::uint64_t generation = facts.generation();
	auto asked = std::chrono::steady_clock::now();
	facts.ask(5);
	BOOST_REQUIRE(eventually([&] { return facts.job(5).names.has_value(); }));
	auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - asked);
	BOOST_TEST_MESSAGE("names of a new job read " << waited.count() << " ms after it registered (refresh: an hour)");
	BOOST_TEST((*facts.job(5).names == gpud::SlurmNames{"gpu", "acct1", "high"}));
	BOOST_TEST(facts.generation() > generation);	// the event loop weighs the job again
}

// Issue 30, step 4: a run's number and key (restart count, start) and its
// node list, from the same slurm_load_job as the job's state.
BOOST_AUTO_TEST_CASE(a_jobs_run_and_nodes_lines_are_parsed_and_garbled_ones_set_aside)
{
	gpud::SlurmReading r = gpud::parse_slurm_facts(
		"job 5 running RUNNING\nrun 5 1 1733140000\nnodes 5 n[0001-0004,0007]\n"
		"run 6 0 1733140001\nnodes 6 node1\n"
		"run 0 0 1733140000\nrun 7 x 1733140000\nrun 8 0 0\nrun 9 0 -5\nrun 10 0\nrun 11 0 1 2\n"
		"run 12 4294967296 1733140000\nnodes 13\nnodes 14 n[1-\nnodes 15 a b\nnodes 16 n[0-70000]\n"
		"nodes 0 node1\n");
	BOOST_TEST((r.runs.at(5) == gpud::SlurmRun{1, 1733140000}));
	BOOST_TEST((r.runs.at(6) == gpud::SlurmRun{0, 1733140001}));
	BOOST_TEST(r.runs.size() == 2u);
	BOOST_TEST(r.nodes.at(5) == "n[0001-0004,0007]");
	BOOST_TEST(r.nodes.at(6) == "node1");
	BOOST_TEST(r.nodes.size() == 2u);
	BOOST_TEST(r.garbled.size() == 12u);
	BOOST_TEST(r.garbled.back() == "nodes 0 node1");
}

// They are kept per watched job like its names: replaced by each reading,
// forgotten with the job, and not served while slurmctld is unreachable.
BOOST_FIXTURE_TEST_CASE(a_watched_jobs_run_and_nodes_are_kept_with_its_state, HealthyStart)
{
	facts.watch({5, 6});
	slurm.push(healthy + "job 5 running RUNNING\nnames 5 gpu acct1 high\nrun 5 0 1733140000\nnodes 5 n[1-2]\n"
			     "job 6 running RUNNING\nrun 7 0 1733140000\nnodes 7 n1\n");
	read_again(facts, w);
	read_again(facts, w);
	gpud::SlurmJob j = facts.job(5);
	BOOST_REQUIRE(j.run.has_value());
	BOOST_TEST((*j.run == gpud::SlurmRun{0, 1733140000}));
	BOOST_TEST(j.nodes == "n[1-2]");
	BOOST_TEST(!facts.job(6).run.has_value());	// not its line
	BOOST_TEST(facts.job(6).nodes.empty());
	BOOST_TEST(!facts.job(7).run.has_value());	// not watched

	slurm.push(healthy + "job 5 running RUNNING\nrun 5 1 1733140100\nnodes 5 n3\n");	// requeued
	read_again(facts, w);
	read_again(facts, w);
	BOOST_TEST((*facts.job(5).run == gpud::SlurmRun{1, 1733140100}));
	BOOST_TEST(facts.job(5).nodes == "n3");

	slurm.push(healthy + "unavailable jobs slurmctld: Unable to contact slurm controller\n");
	read_again(facts, w);
	read_again(facts, w);
	BOOST_TEST(!facts.job(5).run.has_value());	// unreachable: no stale run
	facts.watch({6});
	slurm.push(healthy + "job 5 running RUNNING\nrun 5 1 1733140100\n");
	read_again(facts, w);
	read_again(facts, w);
	BOOST_TEST(!facts.job(5).run.has_value());	// forgotten with the job
	// Its run is still seen, the newest read, for an epilog that comes
	// after the job's last step here (JOBWIDE_PART on Slurm 22.05); job 7,
	// never watched, has none.
	BOOST_TEST((*facts.run_seen(5) == gpud::SlurmRun{1, 1733140100}));
	BOOST_TEST(!facts.run_seen(7));
	facts.forget_run(5);	// its epilog's JOB_END
	BOOST_TEST(!facts.run_seen(5));
}

BOOST_AUTO_TEST_CASE(a_lookup_gives_the_facts_read_and_says_what_is_unknown)
{
	ScriptedSlurm slurm;
	slurm.push(healthy);
	Logged log;
	gpud::SlurmFacts facts(every_100ms(), slurm.reader(), log.logger());
	BOOST_REQUIRE(eventually([&] { return facts.readings() >= 1; }));
	gpud::SlurmPriorities p = facts.lookup("gpu", "high", "acct1", 0);
	BOOST_TEST(*p.partition_factor == 4u);
	BOOST_TEST(*p.qos_priority == 300u);
	BOOST_TEST(!p.fairshare);	// off by default
	BOOST_TEST((p.partition_reason + p.qos_reason + p.fairshare_reason).empty());
	p = facts.lookup("debug", "nosuch", "acct1", 0);
	BOOST_TEST(*p.partition_factor == 1u);
	BOOST_TEST(p.partition_reason.empty());
	BOOST_TEST(!p.qos_priority);
	BOOST_TEST(p.qos_reason == "Slurm has no such QOS");
	p = facts.lookup("debug", "", "", 0);
	BOOST_TEST(p.qos_reason == "Slurm has no such QOS");
	BOOST_TEST(log.count() == 0u);
	BOOST_TEST(facts.generation() == 1u);
}

BOOST_FIXTURE_TEST_CASE(when_slurm_is_unreachable_the_last_values_stay_and_the_reason_is_logged_once, HealthyStart)
{
	slurm.push("unavailable partitions slurmctld: Unable to contact slurm controller (connect failure)\n"
		   "qos normal 0\nqos high 500\n");
	for (int i = 0; i < 4; i++)
		read_again(facts, w);
	gpud::SlurmPriorities p = facts.lookup("gpu", "high", "", 0);
	BOOST_TEST(*p.partition_factor == 4u);	// kept
	BOOST_TEST(*p.qos_priority == 500u);	// read anew
	// Each fact says its own reason: the QOS, read anew, has none.
	BOOST_TEST(p.partition_reason == "the last value read; slurmctld: Unable to contact slurm controller (connect failure)");
	BOOST_TEST(p.qos_reason.empty());
	BOOST_TEST(log.count() == 1u);
	BOOST_TEST(log.lines[0] == "Slurm facts: cannot read partitions (slurmctld: Unable to contact slurm controller "
				   "(connect failure)); the last values read stay");
	BOOST_TEST(facts.generation() == 2u);	// the QOS change, once

	slurm.push(healthy);
	read_again(facts, w);
	read_again(facts, w);
	BOOST_TEST(facts.lookup("gpu", "high", "", 0).partition_reason.empty());
	BOOST_TEST(log.count() == 2u);
	BOOST_TEST(log.lines[1] == "Slurm facts: partitions read again");
}

BOOST_AUTO_TEST_CASE(garbled_output_is_logged_once_not_every_refresh)
{
	ScriptedSlurm slurm;
	slurm.push(healthy + "qos broken x\n");
	Logged log;
	config::SlurmWeights w = every_100ms();
	gpud::SlurmFacts facts(w, slurm.reader(), log.logger());
	BOOST_REQUIRE(eventually([&] { return facts.readings() >= 1; }));
	read_again(facts, w);
	read_again(facts, w);
	BOOST_TEST(log.count() == 1u);
	BOOST_TEST(log.lines[0] == "Slurm facts: ignored a line not understood: 'qos broken x'");
	BOOST_TEST(*facts.lookup("gpu", "high", "", 0).qos_priority == 300u);
}

BOOST_AUTO_TEST_CASE(a_reader_that_fails_leaves_every_value_unknown_with_its_reason)
{
	ScriptedSlurm slurm;
	slurm.push("!cannot run /nowhere/gpuoversub-slurm-facts: No such file or directory");
	Logged log;
	config::SlurmWeights w = every_100ms();
	gpud::SlurmFacts facts(w, slurm.reader(), log.logger());
	BOOST_REQUIRE(eventually([&] { return facts.readings() >= 1; }));
	read_again(facts, w);
	gpud::SlurmPriorities p = facts.lookup("debug", "normal", "", 0);
	BOOST_TEST(!p.partition_factor);
	BOOST_TEST(!p.qos_priority);
	BOOST_TEST(p.partition_reason.rfind("cannot run /nowhere", 0) == 0u);
	BOOST_TEST(p.qos_reason.rfind("cannot run /nowhere", 0) == 0u);
	BOOST_TEST(log.count() == 2u);	// partitions and qos, each once
	BOOST_TEST(facts.generation() == 0u);
}

BOOST_AUTO_TEST_CASE(fairshare_is_asked_for_only_when_switched_on_and_keyed_by_uid)
{
	ScriptedSlurm slurm;
	slurm.push(healthy + "fairshare acct1 root 0.75\nfairshare acct1 no-such-user-here 0.5\n");
	Logged log;
	config::SlurmWeights w = every_100ms();
	w.partition_factor = false;
	gpud::SlurmFacts facts(w, slurm.reader(), log.logger());
	BOOST_REQUIRE(eventually([&] { return facts.readings() >= 1; }));
	BOOST_TEST(!facts.lookup("acct1", "high", "acct1", 0).fairshare);
	w.fairshare = true;
	read_again(facts, w);
	gpud::SlurmPriorities p = facts.lookup("gpu", "high", "acct1", 0);	// root
	BOOST_TEST(*p.fairshare == 0.75);
	BOOST_TEST(!p.partition_factor);	// switched off: not even a reason
	BOOST_TEST((p.partition_reason + p.qos_reason + p.fairshare_reason).empty());
	p = facts.lookup("gpu", "high", "acct2", 0);
	BOOST_TEST(p.fairshare_reason == "Slurm has no such association (account and user)");
	std::lock_guard lock(slurm.mu);
	BOOST_TEST(slurm.fairshare_asked.front() == false);
	BOOST_TEST(slurm.fairshare_asked.back() == true);
}

BOOST_AUTO_TEST_CASE(the_facts_program_runs_with_a_deadline_and_its_failures_say_why)
{
	char dir[] = "/tmp/gos-facts-XXXXXX";
	BOOST_REQUIRE(::mkdtemp(dir));
	auto script = [&](const std::string &name, const std::string &body) {
		std::string path = std::string(dir) + "/" + name;
		std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
		::chmod(path.c_str(), 0755);
		return path;
	};
	std::stop_source never;
	std::string out = gpud::slurm_facts_program(script("ok", "echo \"$# $*\""), 5)({true, {12, 5}}, never.get_token());
	BOOST_TEST(out == "3 --fairshare --jobs 5,12\n");
	out = gpud::slurm_facts_program(script("ok", "echo \"$# $*\""), 5)({}, never.get_token());
	BOOST_TEST(out == "0 \n");
	try {
		gpud::slurm_facts_program(script("fatal", "echo 'gpuoversub-slurm-facts: fatal: Unable to process configuration file' >&2; exit 1"),
					  5)({}, never.get_token());
		BOOST_FAIL("a failing program gave facts");
	} catch (const std::runtime_error &e) {
		BOOST_TEST(std::string(e.what()).find("failed: gpuoversub-slurm-facts: fatal: Unable to process") != std::string::npos);
	}
	auto start = std::chrono::steady_clock::now();
	try {
		gpud::slurm_facts_program(script("hang", "exec sleep 30"), 1)({}, never.get_token());
		BOOST_FAIL("a hung program gave facts");
	} catch (const std::runtime_error &e) {
		BOOST_TEST(std::string(e.what()).find("gave no answer within 1 s") != std::string::npos);
	}
	BOOST_TEST((std::chrono::steady_clock::now() - start < 10s));
	try {
		gpud::slurm_facts_program(std::string(dir) + "/absent", 5)({}, never.get_token());
		BOOST_FAIL("a missing program gave facts");
	} catch (const std::runtime_error &e) {
		BOOST_TEST(std::string(e.what()).find("cannot run") != std::string::npos);
	}
	std::filesystem::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(the_slurm_weights_block_is_checked)
{
	config::Config c = config::parse_config("slurm_weights: {qos_priority: off, fairshare: on, refresh: 5s}\n", "p.yaml");
	BOOST_TEST(c.policy.slurm_weights.partition_factor);
	BOOST_TEST(!c.policy.slurm_weights.qos_priority);
	BOOST_TEST(c.policy.slurm_weights.fairshare);
	BOOST_TEST(c.policy.slurm_weights.refresh_ns == 5'000'000'000ULL);
	auto error = gos_test::config_error;
	BOOST_TEST(error("slurm_weights: {qos: on}\n").find("unknown key 'qos' in 'slurm_weights'; use shards, partition_factor") !=
		   std::string::npos);
	BOOST_TEST(error("slurm_weights: {refresh: 10ms}\n").find("at least 100ms") != std::string::npos);
	BOOST_TEST(error("slurm_weights: {fairshare: maybe}\n").find("'slurm_weights.fairshare' must be true or false") !=
		   std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_facts_weigh_a_job_and_a_yaml_entry_wins_over_the_fact_of_its_kind)
{
	gpud::Job j;
	j.partition = "gpu";
	j.qos = "high";
	j.account = "acct1";
	gpud::JobGpu whole;	// no shards configured: the job holds the GPU whole
	gpud::SlurmPriorities s;
	s.partition_factor = 2;
	s.qos_priority = 3;
	auto weight = [&](const std::string &yaml) {
		return gpud::policy_for(config::parse_config(yaml, "p.yaml"), j, whole, s).weight.nominal;
	};
	BOOST_TEST(weight("") == 6.0);
	BOOST_TEST(weight("weights: {qos: {high: 5}}\n") == 10.0);
	s.qos_priority = 0;	// Slurm's default QOS priority counts as 1
	BOOST_TEST(weight("") == 2.0);
	s.fairshare = 0.5;
	BOOST_TEST(weight("") == 2.0);	// the fair-share factor counts only when asked
	BOOST_TEST(weight("slurm_weights: {fairshare: on}\n") == 1.0);
	BOOST_TEST(weight("fairness: equal\n") == 1.0);
}
