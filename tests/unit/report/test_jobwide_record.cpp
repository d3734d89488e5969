// A run's job-wide record, segment version 3 of AdminComment (issue 30,
// step 2): within 16 KiB at any node count, cut in the order the design
// says (top, then missing), read back as written, beside version 2
// records that still read, and with no byte slurmdbd would need escaped.
// Its form is pinned by golden/admin-comment-v3.txt (test_report_golden).
#define BOOST_TEST_MODULE jobwide_record
#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "common/report/admin_comment.hpp"
#include "common/report/jobwide_record.hpp"
#include "common/util/hostlist.hpp"

using namespace gos::report;
using nlohmann::json;

namespace {

constexpr std::uint64_t top_counter = std::numeric_limits<std::uint64_t>::max();	// 20 digits

// A 24-character name that shares no prefix with another: no range joins them.
std::string worst_name(unsigned i)
{
	std::string s = "x";
	for (unsigned k = 0; s.size() < 24; k++)
		s += static_cast<char>('a' + (i * 7 + k * 13 + i / 26 * k) % 26);
	return s + "q" + std::to_string(i % 10);
}

struct Run {
	RunFacts facts;
	std::vector<NodePart> parts;
	std::vector<std::string> missing;
};

// 1,024 nodes of 8 GPUs, 64 of them missing. Worst: 24-character names
// that never range, 20-digit counters, latencies of many digits and more
// end reasons than the record keeps. Typical: n0001.., GiB-sized figures,
// two end reasons.
Run big_run(bool worst)
{
	Run r;
	r.facts = {18446744073709551615u, 4294967295u, 4102444800, worst ? worst_name(0) : "n0001", 1024, 0};
	for (unsigned i = 0; i < 1024; i++) {
		char typical[8];
		std::snprintf(typical, sizeof typical, "n%04u", i + 1);
		std::string name = worst ? worst_name(i) : typical;
		if (i % 16 == 5) {
			r.missing.push_back(name);
			continue;
		}
		NodePart p;
		p.node = name;
		for (unsigned g = 0; g < 8; g++)
			p.gpus.push_back("0000:" + std::to_string(17 + g) + ":00.0");
		std::uint64_t gib = 1ull << 30;
		p.peak_dev = worst ? top_counter - i : 70 * gib + i * 4096;
		p.peak_host = worst ? top_counter - 2 * i : 20 * gib;
		p.evicted = worst ? top_counter - 3 * i : (i % 3) * 5 * gib;
		p.returned = worst ? top_counter - 4 * i : (i % 3) * 4 * gib;
		p.oversub_s = worst ? 123456789.123456789 + i : 600.25 + i % 7;
		p.p99_us = worst ? 98765432.98765 + i : 11.585237502960396;
		p.end = worst ? "the daemon ended the job for reason number " + std::to_string(i % 20) + " of twenty"
			      : (i % 100 == 0 ? "daemon restarted" : "");
		r.parts.push_back(p);
	}
	return r;
}

JobwideRecord build(const Run &r, const RecordLimits &limits = {})
{
	return build_jobwide_record(r.facts, r.parts, r.missing, limits);
}

std::size_t names_in(const std::string &hostlist)
{
	return gos::expand_hostlist(hostlist).size();
}

} // namespace

BOOST_AUTO_TEST_CASE(a_thousand_nodes_of_eight_gpus_fit_in_16_kib)
{
	for (bool worst : {false, true}) {
		Run run = big_run(worst);
		JobwideRecord r = build(run);
		std::string text = jobwide_segment(r);
		BOOST_TEST_MESSAGE("record at 1,024 x 8, " << (worst ? "worst" : "typical") << ": " << text.size() << " bytes");
		BOOST_TEST(text.size() <= 16384u);
		BOOST_TEST(r.parts == 960u);
		BOOST_TEST(r.n == 1024u);
		BOOST_TEST(r.gpus == 960u * 8);
		BOOST_TEST(r.missing_more == 0u);	// 64 names fit in 2,048 bytes
		BOOST_TEST(names_in(r.missing) == 64u);
		BOOST_TEST(r.top.has_value());
		BOOST_TEST(r.top->size() == 8u);
		BOOST_TEST(r.ended.size() <= 8u);
		std::uint64_t ended = 0;
		for (const auto &[reason, count] : r.ended)
			ended += count;
		BOOST_TEST(ended == 960u);
		if (worst) {
			BOOST_TEST(r.sum_evicted == top_counter);	// saturated, not wrapped
			BOOST_TEST(r.ended.count("other") == 1u);
		} else {
			BOOST_TEST(r.missing == "n[0006,0022,0038,0054,0070,0086,0102,0118,0134,0150,0166,0182,0198,0214,0230,0246,0262,"
						"0278,0294,0310,0326,0342,0358,0374,0390,0406,0422,0438,0454,0470,0486,0502,0518,"
						"0534,0550,0566,0582,0598,0614,0630,0646,0662,0678,0694,0710,0726,0742,0758,0774,"
						"0790,0806,0822,0838,0854,0870,0886,0902,0918,0934,0950,0966,0982,0998,1014]");
			BOOST_TEST(r.ended == (std::map<std::string, std::uint64_t>{{"completed", 949}, {"daemon restarted", 11}}));
		}
	}
}

// Any N: 16,384 nodes that all failed to send, with the worst names.
BOOST_AUTO_TEST_CASE(missing_is_cut_at_2048_bytes_and_the_rest_counted)
{
	Run run;
	run.facts = {7, 0, 1733140000, "n1", 16384, 0};
	for (unsigned i = 0; i < 16384; i++)
		run.missing.push_back(worst_name(i) + std::to_string(i));
	JobwideRecord r = build(run);
	BOOST_TEST_MESSAGE("record of 16,384 missing nodes: " << jobwide_segment(r).size() << " bytes");
	BOOST_TEST(r.missing.size() <= 2048u);
	BOOST_TEST(names_in(r.missing) + r.missing_more == 16384u);
	BOOST_TEST(r.missing_more > 16000u);
	BOOST_TEST(jobwide_segment(r).size() <= 16384u);
}

// Over the bound, top goes before any missing node is cut.
BOOST_AUTO_TEST_CASE(top_is_dropped_first_then_missing_is_cut)
{
	Run run = big_run(true);
	std::string whole = jobwide_segment(build(run));
	JobwideRecord no_top = build(run, {.max_bytes = whole.size() - 1});
	BOOST_TEST(!no_top.top.has_value());
	BOOST_TEST(no_top.missing_more == 0u);
	BOOST_TEST(jobwide_segment(no_top).size() < whole.size());
	std::size_t without_top = jobwide_segment(no_top).size();
	for (std::size_t max : {without_top - 1, without_top - 500, without_top - 1000, without_top - 1600}) {
		JobwideRecord r = build(run, {.max_bytes = max});
		BOOST_TEST_CONTEXT("max " << max)
		{
			BOOST_TEST(jobwide_segment(r).size() <= max);
			BOOST_TEST(!r.top.has_value());
			BOOST_TEST(r.missing_more > 0u);
			BOOST_TEST(names_in(r.missing) + r.missing_more == 64u);
		}
	}
	BOOST_CHECK_THROW(build(run, {.max_bytes = 200}), std::length_error);
}

BOOST_AUTO_TEST_CASE(a_record_reads_back_as_written)
{
	for (bool worst : {false, true}) {
		JobwideRecord r = build(big_run(worst));
		std::string field = join_admin_comment({"site text", r});
		AdminComment c = split_admin_comment(field);
		BOOST_TEST(c.site == "site text");
		JobwideRecord read = c.ours.get<JobwideRecord>();
		BOOST_TEST((read == r));
		BOOST_TEST(join_admin_comment({c.site, read}) == field);
	}
	// Top dropped reads as dropped, and a record with nothing evicted as none.
	JobwideRecord dropped;
	dropped.top.reset();
	BOOST_TEST(!json(dropped).get<JobwideRecord>().top.has_value());
	NodePart quiet;
	quiet.node = "n1";
	JobwideRecord none = build_jobwide_record({1, 0, 1, "n1", 1, 0}, {quiet}, {});
	BOOST_TEST(none.top->empty());
	BOOST_TEST(json(none).get<JobwideRecord>().top->empty());
	// A field of the wrong type reads as its default, named; the rest reads.
	JobwideRecord partly = json({{"gos", 3}, {"parts", "many"}, {"n", 4}, {"max", {{"oversub_s", nullptr}}},
				     {"node", {{"evicted", {1, 2}}}}, {"sum", 7}, {"top", "x"}})
				       .get<JobwideRecord>();
	BOOST_TEST(partly.n == 4u);
	BOOST_TEST(partly.parts == 0u);
	BOOST_TEST(partly.unread == (std::vector<std::string>{"sum", "parts", "max.oversub_s", "node.evicted", "top"}),
		   boost::test_tools::per_element());
	BOOST_CHECK_THROW(json({{"gos", "three"}}).get<JobwideRecord>(), json::exception);
}

// Issue 50, finding 7: a root-sealed part's absurd figures stay numbers.
BOOST_AUTO_TEST_CASE(every_figure_of_a_record_is_a_number)
{
	NodePart huge, odd;
	huge.node = "n1";
	huge.oversub_s = 1e308;
	huge.p99_us = std::numeric_limits<double>::max();
	odd.node = "n2";
	odd.oversub_s = std::numeric_limits<double>::infinity();
	odd.p99_us = std::numeric_limits<double>::quiet_NaN();
	JobwideRecord r = build_jobwide_record({1, 0, 1, "n1", 2, 0}, {huge, odd}, {});
	const std::string text = jobwide_segment(r);
	BOOST_TEST(text.find("null") == std::string::npos, text);
	BOOST_TEST(r.max_oversub_s == 1e308);
	BOOST_TEST(r.node_oversub_s.min == 0.0);	// the infinite one
	JobwideRecord back = split_admin_comment(text).ours.get<JobwideRecord>();
	BOOST_TEST(back.unread.empty());
	BOOST_TEST(back.max_p99_us == std::numeric_limits<double>::max());
}

BOOST_AUTO_TEST_CASE(version_2_records_still_read_and_newer_ones_are_said)
{
	std::ifstream in("tests/unit/report/golden/admin-comment.txt");
	std::string v2((std::istreambuf_iterator<char>(in)), {});
	BOOST_REQUIRE(!v2.empty());
	AdminComment c = split_admin_comment(v2);
	BOOST_TEST(c.site == "site: keep me");
	BOOST_TEST(c.ours["gos"] == 2);
	BOOST_TEST(c.ours["parts"].size() == 2u);
	BOOST_TEST(join_admin_comment(c) + "\n" == v2);
	// A later version's segment is ours too, and a gos that is no number is not.
	BOOST_TEST(split_admin_comment("a gpuoversub={\"gos\":4,\"run\":0}").ours["gos"] == 4);
	BOOST_TEST(split_admin_comment("gpuoversub={\"gos\":\"3\"}").ours.empty());
	BOOST_TEST(split_admin_comment("{\"gos\":\"1\"}").site == "{\"gos\":\"1\"}");	// threw before
	// A newer release's compressed record is kept whole, apart from the site's text.
	AdminComment z = split_admin_comment("site gpuoversub=z:H4sIAAAAAAAAA+3B/w== more");
	BOOST_TEST(z.site == "site more");
	BOOST_TEST(z.newer == "gpuoversub=z:H4sIAAAAAAAAA+3B/w==");
	BOOST_TEST(z.ours.empty());
	BOOST_TEST(join_admin_comment(z) == "site more gpuoversub=z:H4sIAAAAAAAAA+3B/w==");
}

// Every string of the record is the writer's, of record_chars only: a
// hostile node name, writer, end reason or missing name never puts a
// quote, a backslash or a control character into the field.
BOOST_AUTO_TEST_CASE(hostile_strings_never_reach_the_text)
{
	const std::vector<std::string> hostile = {"n1'; DROP TABLE job_table; --", "n2\\", "n3\"}", "n4\nroot", "n5\x1b[2J",
						  "gr\xc3\xbc\xc3\x9f", "n6,n7", "n[8-9]", "", std::string(300, 'y')};
	Run run;
	run.facts = {1, 0, 1, hostile[0], 20, 0};
	for (const auto &h : hostile) {
		NodePart p;
		p.node = h;
		p.evicted = 1;
		p.end = h;
		run.parts.push_back(p);
		run.missing.push_back(h + "m");
	}
	std::string text = jobwide_segment(build(run));
	BOOST_TEST_MESSAGE("hostile: " << text);
	BOOST_TEST(slurmdbd_safe(text));
	BOOST_TEST(text.find('\\') == std::string::npos);	// no escape of any kind
	for (char c : text)
		BOOST_TEST((c >= 0x20 && c < 0x7f));
	JobwideRecord r = split_admin_comment(text).ours.get<JobwideRecord>();
	BOOST_TEST(names_in(r.missing) == hostile.size());
	BOOST_TEST(r.writer.size() <= 64u);
	for (const auto &[reason, count] : r.ended)
		BOOST_TEST(reason.find_first_not_of(record_chars) == std::string::npos);
	BOOST_TEST(!slurmdbd_safe("site's"));
	BOOST_TEST(!slurmdbd_safe("a\\b"));
	BOOST_TEST(!slurmdbd_safe("a\tb"));
	BOOST_TEST(slurmdbd_safe("project=climate; ticket 42"));
}
