// The epilog's JOBWIDE_PART in the daemon's job-wide state: the writer
// expects its run and keeps its own part to open, the successor stands by
// for it; any other node sends its part on to the writer; every malformed request is refused whole, with
// nothing held.
#define BOOST_TEST_MODULE jobwide
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "daemon/gpud/jobwide.hpp"

using namespace gos;
using namespace gos::gpud;

namespace {

constexpr std::int64_t start = 1733140000;

struct Fixture {
	std::filesystem::path dir;
	config::Config cfg;
	std::vector<std::string> logged;
	std::unique_ptr<Jobwide> jw;
	int pokes = 0;
	Fixture()
	{
		char tmpl[] = "/tmp/gos-jobwide-XXXXXX";
		dir = ::mkdtemp(tmpl);
		cfg.start.state_dir = dir;
		cfg.policy.report_admin_comment = true;
		jw = std::make_unique<Jobwide>(cfg, [this](const std::string &l) { logged.push_back(l); });
		jw->on_work([this] { pokes++; });
	}
	~Fixture() { std::filesystem::remove_all(dir); }
};

std::string frame_of(const std::string &node, std::uint32_t job)
{
	jobwide::Bytes bytes;
	BOOST_REQUIRE(!jobwide::encode_frame({jobwide::Kind::part, node, job, "MUNGE:sealed"}, bytes));
	return std::string(bytes.begin(), bytes.end());
}

RunEnd end_of(const std::string &node, bool with_part = true)
{
	return {42, start, 1, 3, node, "n[1-3]", with_part ? frame_of(node, 42) : ""};
}

const auto mono = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);

} // namespace

BOOST_AUTO_TEST_CASE(the_writer_expects_its_run_and_opens_its_own_part)
{
	Fixture x;
	BOOST_TEST(!x.jw->run_end(end_of("n1"), start + 60, mono));
	BOOST_TEST(x.jw->writer().knows(42));
	BOOST_TEST(x.jw->writer().member(42, "n3"));
	BOOST_TEST(x.jw->outbox().held() == 0u);
	auto own = x.jw->take_own();
	BOOST_TEST(own.size() == 1u);
	BOOST_TEST(own.front().frame.node == "n1");
	BOOST_TEST(own.front().start == start);
	BOOST_TEST(own.front().writes);
	BOOST_TEST(x.jw->take_own().empty());
	BOOST_TEST(x.jw->self() == "n1");
	BOOST_TEST(x.pokes == 1);
	// The same run's end again (a second epilog call) expects nothing new.
	BOOST_TEST(!x.jw->run_end(end_of("n1", false), start + 61, mono));
	BOOST_TEST(x.jw->writer().runs() == 1u);
}

BOOST_AUTO_TEST_CASE(another_node_sends_its_part_to_the_writer)
{
	Fixture x;
	BOOST_TEST(!x.jw->run_end(end_of("n3"), start + 60, mono));
	BOOST_TEST(!x.jw->writer().knows(42));
	BOOST_TEST(x.jw->take_own().empty());
	BOOST_TEST(x.jw->outbox().held() == 1u);
	auto tries = x.jw->outbox().due(mono);
	BOOST_REQUIRE(tries.size() == 1u);
	BOOST_TEST(*tries[0].node == "n1");
	BOOST_TEST(*tries[0].frame == frame_of("n3", 42));	// forwarded unchanged
	BOOST_TEST(tries[0].part->node == "n3");	// the node a sealed answer must name
	BOOST_TEST(tries[0].part->start == start);
	BOOST_TEST(x.jw->counts().queued == 1u);
	// No part here (a job without a report on this node): nothing to send.
	Fixture y;
	BOOST_TEST(!y.jw->run_end(end_of("n3", false), start + 60, mono));
	BOOST_TEST(y.jw->outbox().held() == 0u);
}

// The successor (the list's second node) stands by for the run: it keeps
// its own part for it and sends it to the writer; the others' parts go to
// the writer, and to the successor after failover_after.
BOOST_AUTO_TEST_CASE(the_successor_stands_by_and_the_others_name_it)
{
	Fixture x;
	BOOST_TEST(!x.jw->run_end(end_of("n2"), start + 60, mono));
	BOOST_TEST(x.jw->writer().knows(42));
	BOOST_TEST(x.jw->take_own().size() == 1u);
	auto tries = x.jw->outbox().due(mono);
	BOOST_REQUIRE(tries.size() == 1u);
	BOOST_TEST(*tries[0].node == "n1");
	// Its try in flight, nothing more is due: no successor, it is this node.
	BOOST_TEST(x.jw->outbox().due(mono + std::chrono::seconds(60)).empty());
	Fixture y;
	BOOST_TEST(!y.jw->run_end(end_of("n3"), start + 60, mono));
	BOOST_TEST(!y.jw->writer().knows(42));
	BOOST_TEST(y.jw->outbox().due(mono).size() == 1u);	// the writer at once
	tries = y.jw->outbox().due(mono + std::chrono::seconds(60));	// the successor after failover_after
	BOOST_REQUIRE(tries.size() == 1u);
	BOOST_TEST(*tries[0].node == "n2");
}

BOOST_AUTO_TEST_CASE(a_malformed_run_end_is_refused_with_nothing_held)
{
	Fixture x;
	auto refused = [&](RunEnd e, const std::string &words) {
		auto r = x.jw->run_end(e, start + 60, mono);
		BOOST_TEST_INFO("expected a refusal with: " << words);
		BOOST_REQUIRE(r.has_value());
		BOOST_TEST(r->status == -EINVAL);
		BOOST_TEST(r->why.find(words) != std::string::npos, r->why);
	};
	RunEnd e = end_of("n2");
	e.job = 0;
	refused(e, "job id");
	e = end_of("n2");
	e.job = 1ULL << 32;
	refused(e, "job id");
	e = end_of("n2");
	e.start = 0;
	refused(e, "start");
	e = end_of("n2");
	e.num_nodes = 0;
	refused(e, "number of nodes");
	e = end_of("n2");
	e.node = "n2;rm";
	refused(e, "SLURMD_NODENAME");
	e = end_of("n2");
	e.nodelist = "n[1-3";
	refused(e, "SLURM_NODELIST");
	e = end_of("n4");
	refused(e, "not in SLURM_NODELIST");
	e = end_of("n2");
	e.frame = "GOSJ-not-a-frame";
	refused(e, "frame does not read");
	e = end_of("n2");
	e.frame = frame_of("n3", 42);	// another node's part
	refused(e, "names node n3");
	e = end_of("n2");
	e.frame = frame_of("n2", 43);	// another job's
	refused(e, "job 43");
	e = end_of("n1");
	e.frame = "GOSJ-not-a-frame";	// the writer's own: its run is not expected either
	refused(e, "frame does not read");
	e = end_of("n2");
	e.nodelist = "n1,n2,bad name";
	refused(e, "cannot carry");
	BOOST_TEST(x.jw->outbox().held() == 0u);
	BOOST_TEST(x.jw->writer().runs() == 0u);
	BOOST_TEST(x.jw->take_own().empty());
	BOOST_TEST(x.pokes == 0);
	BOOST_TEST(x.jw->counts().run_ends == 0u);
	BOOST_TEST(x.jw->self().empty());
	std::vector<std::string> problems;
	BOOST_TEST(load_pending(x.dir, 100, problems).empty());	// nothing saved either
}

// Issue 50, finding 5: a part is saved before its run end is answered, and
// a restarted daemon takes it again as the epilog gave it; once settled,
// its saved end is gone.
BOOST_AUTO_TEST_CASE(a_part_is_saved_before_it_is_answered_and_taken_again_after_a_restart)
{
	Fixture x;
	const RunEnd sent = end_of("n3");
	BOOST_TEST(!x.jw->run_end(sent, start + 60, mono));
	BOOST_TEST(!x.jw->run_end(end_of("n3", false), start + 61, mono));	// no part: nothing saved
	std::vector<std::string> problems;
	auto saved = load_pending(x.dir, 100, problems);
	BOOST_REQUIRE(saved.size() == 1u);
	BOOST_TEST((saved[0].end == sent));
	BOOST_TEST(saved[0].saved_at == start + 60);
	BOOST_TEST(problems.empty());
	const auto mode = std::filesystem::status(pending_path(x.dir, 42, start)).permissions() & std::filesystem::perms::all;
	BOOST_TEST((mode == (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write)));
	// The daemon restarts: a new state, the saved end taken again.
	Jobwide again(x.cfg, [](const std::string &) {});
	BOOST_TEST(!again.resume_end(saved[0].end, start + 90, mono));
	auto tries = again.outbox().due(mono);
	BOOST_REQUIRE(tries.size() == 1u);
	BOOST_TEST(*tries[0].frame == sent.frame);
	BOOST_TEST(load_pending(x.dir, 100, problems)[0].saved_at == start + 60);	// as first saved
	again.part_settled(42, start);
	BOOST_TEST(load_pending(x.dir, 100, problems).empty());
	// A file that does not read is named and left.
	std::ofstream(pending_path(x.dir, 43, start)) << "{\"job\":43}";
	std::ofstream(pending_path(x.dir, 44, start)) << sent.frame;
	BOOST_TEST(load_pending(x.dir, 100, problems).empty());
	BOOST_TEST(problems.size() == 2u);
	// A disk that cannot take it: refused, so that the epilog says so.
	Fixture y;
	y.cfg.start.state_dir = (y.dir / "gone").string();
	Jobwide full(y.cfg, [](const std::string &) {});
	auto refused = full.run_end(sent, start + 60, mono);
	BOOST_REQUIRE(refused.has_value());
	BOOST_TEST(refused->status == -EIO);
	BOOST_TEST(refused->why.find("the part could not be saved") == 0u, refused->why);
	BOOST_TEST(full.outbox().held() == 0u);
}

BOOST_AUTO_TEST_CASE(the_channel_is_off_while_reports_admin_comment_is)
{
	Fixture x;
	x.cfg.policy.report_admin_comment = false;
	x.jw->configure(x.cfg);
	auto r = x.jw->run_end(end_of("n1"), start + 60, mono);
	BOOST_REQUIRE(r.has_value());
	BOOST_TEST(r->status == -ENOTSUP);
	BOOST_TEST(x.jw->writer().runs() == 0u);
	x.cfg.policy.report_admin_comment = true;
	x.jw->configure(x.cfg);
	BOOST_TEST(!x.jw->run_end(end_of("n1"), start + 60, mono));
}

BOOST_AUTO_TEST_CASE(the_outbox_and_own_parts_are_bounded)
{
	Fixture x;
	for (std::uint64_t job = 1; job <= 1024; job++) {
		RunEnd e{job, start, 0, 2, "n2", "n[1-2]", frame_of("n2", static_cast<std::uint32_t>(job))};
		BOOST_REQUIRE(!x.jw->run_end(e, start + 60, mono));
	}
	RunEnd e{1025, start, 0, 2, "n2", "n[1-2]", frame_of("n2", 1025)};
	auto r = x.jw->run_end(e, start + 60, mono);
	BOOST_REQUIRE(r.has_value());
	BOOST_TEST(r->status == -EBUSY);
	BOOST_TEST(x.jw->outbox().held() == 1024u);
}
