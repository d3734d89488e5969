// A run's parts at its writer: which parts it keeps, what is missing, the
// record and the job-wide file at the end of the wait; and its journal,
// written, torn by a crash, hostile, and read back.
#define BOOST_TEST_MODULE jobwide_run
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "daemon/gpud/jobwide_journal.hpp"
#include "daemon/gpud/jobwide_run.hpp"
#include "daemon/gpud/jobwide_writer.hpp"

using namespace gos;
using namespace gos::gpud;

namespace {

report::RunFacts facts_of(std::uint64_t job = 42)
{
	report::RunFacts f;
	f.job = job;
	f.run = 1;
	f.start = 1733140000;
	f.writer = "n1";
	return f;
}

report::NodePart part(const std::string &node, std::uint64_t evicted = 0)
{
	report::NodePart p;
	p.node = node;
	p.run = 1;
	p.gpus = {"0000:17:00.0"};
	p.evicted = evicted;
	p.peak_dev = 1000;
	return p;
}

nlohmann::json sent(const report::NodePart &p)
{
	return nlohmann::json(p);
}

struct TempDir {
	std::filesystem::path path;
	TempDir()
	{
		char tmpl[] = "/tmp/gos-jobwide-XXXXXX";
		path = ::mkdtemp(tmpl);
	}
	~TempDir() { std::filesystem::remove_all(path); }
};

} // namespace

BOOST_AUTO_TEST_CASE(keeps_each_nodes_first_part_and_names_the_missing)
{
	JobwideRun run(facts_of(), {"n1", "n2", "n3", "n2"});
	BOOST_TEST(run.facts().nodes == 3u);	// the repeat counts once
	BOOST_TEST(name_of(run.take(part("n2", 5), sent(part("n2", 5)))) == "kept");
	BOOST_TEST(name_of(run.take(part("n2", 9), sent(part("n2", 9)))) == "dup");
	BOOST_TEST(name_of(run.take(part("x9"), sent(part("x9")))) == "not_in_run");
	BOOST_TEST(!run.complete());
	BOOST_TEST(run.missing() == (std::vector<std::string>{"n1", "n3"}));
	BOOST_TEST(name_of(run.take(part("n1"), sent(part("n1")))) == "kept");
	BOOST_TEST(name_of(run.take(part("n3"), sent(part("n3")))) == "kept");
	BOOST_TEST(run.complete());
	BOOST_TEST(run.missing().empty());
	report::JobwideRecord r = run.close();
	BOOST_TEST(r.parts == 3u);
	BOOST_TEST(r.n == 3u);
	BOOST_TEST(r.sum_evicted == 5u);	// the first copy of n2's counted, not the second
}

BOOST_AUTO_TEST_CASE(a_part_after_the_wait_goes_to_the_file_only)
{
	JobwideRun run(facts_of(), {"n1", "n2"});
	run.take(part("n1"), sent(part("n1")));
	report::JobwideRecord r = run.close();
	BOOST_TEST(r.parts == 1u);
	BOOST_TEST(r.missing == "n2");
	BOOST_TEST(name_of(run.take(part("n2", 7), sent(part("n2", 7)))) == "late");
	BOOST_TEST(name_of(run.take(part("n2"), sent(part("n2")))) == "dup");
	BOOST_TEST(run.facts().late == 1u);
	nlohmann::json f = run.file("gpuoversub={}");
	BOOST_TEST(f["parts"].size() == 1u);
	BOOST_TEST(f["late"].size() == 1u);
	BOOST_TEST(f["late"][0]["evicted"] == 7);
	BOOST_TEST(f["missing"] == nlohmann::json::array({"n2"}));	// from the record
	BOOST_TEST(f["field"] == "gpuoversub={}");
}

BOOST_AUTO_TEST_CASE(refusals_are_kept_for_the_file_within_a_bound)
{
	JobwideRun run(facts_of(), {"n1"});
	for (std::size_t i = 0; i < JobwideRun::kept_refusals + 10; i++)
		run.refused({"n2", "10.0.0.9", "not_root"});
	nlohmann::json f = run.file("");
	BOOST_TEST(f["refused"].size() == JobwideRun::kept_refusals);
	BOOST_TEST(f["refused_more"] == 10);
	BOOST_TEST(f["refused"][0]["reason"] == "not_root");
}

BOOST_AUTO_TEST_CASE(an_empty_node_list_or_name_is_refused)
{
	BOOST_CHECK_THROW(JobwideRun(facts_of(), {}), std::invalid_argument);
	BOOST_CHECK_THROW(JobwideRun(facts_of(), {"n1", ""}), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(a_journal_reads_back_its_run_and_parts)
{
	TempDir d;
	std::string path = journal_path(d.path, 42, 1733140000);
	BOOST_TEST(path == d.path.string() + "/jobwide-42-1733140000.jsonl");
	{
		JobwideJournal j(path, facts_of(), "n[1-3]", 1733140100);
		j.append(sent(part("n2", 5)));
	}
	{
		JobwideJournal again(path);	// a restarted daemon goes on appending
		again.append(sent(part("n3")));
	}
	const auto mode = std::filesystem::status(path).permissions() & std::filesystem::perms::all;
	BOOST_TEST((mode == (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write)));
	ResumedRun r = resume_journal(path, 16);
	BOOST_TEST(r.facts.job == 42u);
	BOOST_TEST(r.facts.run == 1u);
	BOOST_TEST(r.facts.start == 1733140000);
	BOOST_TEST(r.facts.writer == "n1");
	BOOST_TEST(r.nodes == "n[1-3]");
	BOOST_TEST(r.deadline == 1733140100);
	BOOST_TEST(r.parts.size() == 2u);
	BOOST_TEST(r.parts[0]["evicted"] == 5);
	BOOST_TEST(r.skipped == 0u);
}

BOOST_AUTO_TEST_CASE(a_torn_or_hostile_journal_costs_its_bad_lines_only)
{
	TempDir d;
	std::string path = journal_path(d.path, 7, 1);
	{
		JobwideJournal j(path, facts_of(7), "n[1-2]", 2);
		j.append(sent(part("n1")));
	}
	{
		std::ofstream out(path, std::ios::app);
		out << "not json\n" << R"({"part":3})" << "\n" << std::string(journal_max_line + 100, 'x') << "\n"
		    << R"({"part":{"node":"n2"}})" << "\n" << R"({"part":{"node":)";	// the crash's torn line
	}
	ResumedRun r = resume_journal(path, 16);
	BOOST_TEST(r.parts.size() == 2u);
	BOOST_TEST(r.parts[1]["node"] == "n2");
	BOOST_TEST(r.skipped == 4u);
	// Appended to again after the restart: the torn line is ended first,
	// so the new part is a line of its own.
	JobwideJournal(path).append(sent(part("n3")));
	r = resume_journal(path, 16);
	BOOST_TEST(r.parts.size() == 3u);
	BOOST_TEST(r.parts[2]["node"] == "n3");
	BOOST_TEST(r.skipped == 4u);
	// At most max_parts parts, whatever the file holds.
	BOOST_TEST(resume_journal(path, 1).parts.size() == 1u);
	BOOST_TEST(resume_journal(path, 1).skipped == 6u);
}

BOOST_AUTO_TEST_CASE(a_journal_without_its_head_or_through_a_link_is_refused)
{
	TempDir d;
	std::string empty = (d.path / "jobwide-1-1.jsonl").string();
	std::ofstream(empty).close();
	BOOST_CHECK_THROW(resume_journal(empty, 16), std::runtime_error);
	std::string headless = (d.path / "jobwide-2-1.jsonl").string();
	std::ofstream(headless) << R"({"part":{"node":"n1"}})" << "\n";
	BOOST_CHECK_THROW(resume_journal(headless, 16), std::runtime_error);
	std::string bad_head = (d.path / "jobwide-3-1.jsonl").string();
	std::ofstream(bad_head) << R"({"job":"x","nodes":"n1","deadline":1})" << "\n";
	BOOST_CHECK_THROW(resume_journal(bad_head, 16), std::runtime_error);
	std::string link = (d.path / "jobwide-4-1.jsonl").string();
	std::filesystem::create_symlink(headless, link);
	BOOST_CHECK_THROW(resume_journal(link, 16), std::runtime_error);
	// Made again through a planted link: the link is replaced, not followed.
	{
		JobwideJournal j(link, facts_of(4), "n1", 1);
	}
	BOOST_TEST(!std::filesystem::is_symlink(link));
	BOOST_TEST(std::filesystem::file_size(headless) == std::string(R"({"part":{"node":"n1"}})" "\n").size());
	BOOST_TEST(resume_journal(link, 16).facts.job == 4u);
}

namespace {

struct Writer {
	TempDir dir;
	std::vector<std::string> log;
	JobwideWriter w;
	explicit Writer(std::size_t max_nodes = 16384)
		: w({.state_dir = dir.path.string(), .wait_s = 60, .keep_s = 3600, .max_nodes = max_nodes, .max_runs = 4},
		    [this](const std::string &line) { log.push_back(line); })
	{
	}
};

} // namespace

BOOST_AUTO_TEST_CASE(the_writer_closes_a_run_when_all_parts_are_in_or_at_its_deadline)
{
	Writer x;
	const std::int64_t t = 1000;
	BOOST_TEST(!x.w.expect(facts_of(1), "n[1-2]", t));
	BOOST_TEST(!x.w.expect(facts_of(2), "n[1-3]", t + 5));
	BOOST_TEST(!x.w.expect(facts_of(1), "n[1-2]", t + 6));	// known: its deadline stands
	BOOST_TEST(*x.w.next_deadline() == t + 60);
	BOOST_TEST(x.w.member(1, "n2"));
	BOOST_TEST(!x.w.member(1, "n3"));
	BOOST_TEST(!x.w.member(3, "n1"));
	auto start = facts_of().start;
	BOOST_TEST(name_of(x.w.take(1, start, part("n1"), sent(part("n1")))) == "kept");
	BOOST_TEST(name_of(x.w.take(1, start + 1, part("n1"), sent(part("n1")))) == "unknown_run");
	BOOST_TEST(name_of(x.w.take(1, start, part("n9"), sent(part("n9")))) == "not_in_run");
	x.w.refused(1, {"n9", "10.0.0.9", "not_member"});	// the door's, for the file
	x.w.refused(7, {"n1", "10.0.0.1", "not_root"});	// a job not held here: nowhere
	BOOST_TEST(x.w.due(t + 10).empty());
	BOOST_TEST(name_of(x.w.take(1, start, part("n2", 3), sent(part("n2", 3)))) == "kept");
	std::vector<ClosedRun> closed = x.w.due(t + 11);	// job 1 is complete
	BOOST_TEST(closed.size() == 1u);
	BOOST_TEST(closed[0].facts.job == 1u);
	BOOST_TEST(closed[0].record.parts == 2u);
	BOOST_TEST(!closed[0].file_only);
	BOOST_TEST(closed[0].file["refused"].size() == 1u);
	BOOST_TEST(closed[0].file["refused"][0]["reason"] == "not_member");
	x.w.written(1, start, "gpuoversub={}");
	BOOST_TEST(std::filesystem::exists(journal_path(x.dir.path, 1, start)));	// until filed
	x.w.filed(1, start);
	BOOST_TEST(!std::filesystem::exists(journal_path(x.dir.path, 1, start)));
	BOOST_TEST(name_of(x.w.take(1, start, part("n2"), sent(part("n2")))) == "dup");
	BOOST_TEST((*x.w.file_of(1, start))["field"] == "gpuoversub={}");	// a rewrite keeps what was written
	closed = x.w.due(t + 65);	// job 2's deadline
	BOOST_TEST(closed.size() == 1u);
	BOOST_TEST(closed[0].record.missing == "n[1-3]");
	BOOST_TEST(name_of(x.w.take(2, start, part("n3"), sent(part("n3")))) == "late");
	BOOST_TEST((*x.w.file_of(2, start))["late"].size() == 1u);
	BOOST_TEST(x.w.runs() == 2u);
	x.w.due(t + 11 + 3600);	// job 1 kept for an hour
	BOOST_TEST(x.w.runs() == 1u);
	BOOST_TEST(!x.w.file_of(1, start));
}

// The run's successor (its list's second node) stands by: failover_after
// longer, and its closed run names the writer it covers, also when resumed.
BOOST_AUTO_TEST_CASE(the_successor_stands_by_for_the_writer_for_failover_after_longer)
{
	Writer x;
	auto f = facts_of(1);
	f.writer = "n2";	// this node, the second of n[1-3]
	BOOST_TEST(!x.w.expect(f, "n[1-3]", 1000));
	BOOST_TEST(*x.w.next_deadline() == 1000 + 60 + 60);
	BOOST_TEST(name_of(x.w.take(1, f.start, part("n2"), sent(part("n2")))) == "kept");
	BOOST_TEST(name_of(x.w.take(1, f.start, part("n3"), sent(part("n3")))) == "kept");
	BOOST_TEST(x.w.due(1000 + 60).empty());	// the writer's own wait is no end here
	{
		Writer resumed;
		std::filesystem::copy_file(journal_path(x.dir.path, 1, f.start), journal_path(resumed.dir.path, 1, f.start));
		BOOST_TEST(resumed.w.resume(1001).empty());
		std::vector<ClosedRun> closed = resumed.w.due(1000 + 120);
		BOOST_REQUIRE(closed.size() == 1u);
		BOOST_TEST(closed[0].covers == "n1");
	}
	BOOST_TEST(!x.w.writer_has_own(1, f.start));
	x.w.writer_took_own(1, f.start);	// the outbox delivered n2's own part to n1
	BOOST_TEST(x.w.writer_has_own(1, f.start));
	std::vector<ClosedRun> closed = x.w.due(1000 + 120);
	BOOST_REQUIRE(closed.size() == 1u);
	BOOST_TEST(closed[0].covers == "n1");
	BOOST_TEST(closed[0].record.writer == "n2");
	BOOST_TEST(closed[0].record.missing == "n1");
	// Not written here: its journal goes, it has no file, a later part is dup.
	x.w.drop(1, f.start);
	BOOST_TEST(!std::filesystem::exists(journal_path(x.dir.path, 1, f.start)));
	BOOST_TEST(!x.w.file_of(1, f.start));
	BOOST_TEST(name_of(x.w.take(1, f.start, part("n1"), sent(part("n1")))) == "dup");
	// The writer's own run covers no one.
	BOOST_TEST(!x.w.expect(facts_of(2), "n[1-3]", 1000));
	BOOST_TEST(name_of(x.w.take(2, f.start, part("n1"), sent(part("n1")))) == "kept");
	closed = x.w.due(1000 + 60);
	BOOST_REQUIRE(closed.size() == 1u);
	BOOST_TEST(closed[0].covers.empty());
}

BOOST_AUTO_TEST_CASE(the_writer_refuses_a_run_it_cannot_hold)
{
	Writer x(4);
	BOOST_TEST(x.w.expect(facts_of(1), "n[1-5]", 0)->find("max_nodes") != std::string::npos);
	BOOST_TEST(x.w.expect(facts_of(1), "n[1-", 0)->find("does not read") != std::string::npos);
	BOOST_TEST(x.w.expect(facts_of(1), "n[1-100000000]", 0)->find("does not read") != std::string::npos);
	for (std::uint64_t job = 1; job <= 4; job++)
		BOOST_TEST(!x.w.expect(facts_of(job), "n1", 0));
	BOOST_TEST(x.w.expect(facts_of(5), "n1", 0)->find("runs already") != std::string::npos);
	// A written run, kept for its late parts, gives way to a new one.
	x.w.take(2, facts_of().start, part("n1"), sent(part("n1")));
	BOOST_TEST(x.w.due(1).size() == 1u);
	BOOST_TEST(!x.w.expect(facts_of(5), "n1", 1));
	BOOST_TEST(x.w.runs() == 4u);
	BOOST_TEST(!x.w.knows(2));
}

BOOST_AUTO_TEST_CASE(a_restarted_writer_resumes_its_runs_from_their_journals)
{
	Writer x;
	auto start = facts_of().start;
	{
		JobwideWriter before({.state_dir = x.dir.path.string()}, [](const std::string &) {});
		before.expect(facts_of(1), "n[1-3]", 1000);	// deadline 1060
		before.take(1, start, part("n1", 4), sent(part("n1", 4)));
		before.expect(facts_of(2), "n[1-2]", 0);	// deadline 60
		before.take(2, start, part("n2"), sent(part("n2")));
	}	// killed: nothing closed
	std::vector<ClosedRun> stale = x.w.resume(1100);	// job 2's deadline passed more than wait ago
	BOOST_TEST(stale.size() == 1u);
	BOOST_TEST(stale[0].facts.job == 2u);
	BOOST_TEST(stale[0].file_only);
	BOOST_TEST(stale[0].record.parts == 1u);
	BOOST_TEST(x.w.member(1, "n3"));
	BOOST_TEST(name_of(x.w.take(1, start, part("n1"), sent(part("n1")))) == "dup");	// the journal's n1 stands
	BOOST_TEST(name_of(x.w.take(1, start, part("n2"), sent(part("n2")))) == "kept");
	std::vector<ClosedRun> closed = x.w.due(1100);	// job 1's deadline, 1060, is past
	BOOST_TEST(closed.size() == 1u);
	BOOST_TEST(closed[0].record.parts == 2u);
	BOOST_TEST(closed[0].record.sum_evicted == 4u);
	// A state_dir written with a trailing slash finds its journals all the same.
	{
		JobwideWriter before({.state_dir = x.dir.path.string()}, [](const std::string &) {});
		before.expect(facts_of(3), "n[1-2]", 1000);
	}
	JobwideWriter slash({.state_dir = x.dir.path.string() + "/"}, [](const std::string &) {});
	slash.resume(1001);
	BOOST_TEST(slash.knows(3));
	// A journal whose name is not its run's is left alone.
	std::filesystem::copy_file(journal_path(x.dir.path, 1, start), x.dir.path / "jobwide-9-9.jsonl");
	Writer y;
	std::filesystem::copy_file(x.dir.path / "jobwide-9-9.jsonl", y.dir.path / "jobwide-9-9.jsonl");
	BOOST_TEST(y.w.resume(1100).empty());
	BOOST_TEST(y.w.runs() == 0u);
	BOOST_TEST(y.log.size() == 1u);
}
