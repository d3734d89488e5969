// gpuoversub's segment of AdminComment: the site's text around it kept,
// each node's part of each run merged in whatever order they come, the
// totals recomputed, and the nodes without a part named.
#define BOOST_TEST_MODULE admin_comment
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "common/report/admin_comment.hpp"

using namespace gos::report;
using nlohmann::json;

namespace {

const std::vector<std::string> three = {"n1", "n2", "n3"};

Report report(std::uint64_t peak, std::uint64_t evicted, const std::string &bus)
{
	Report r;
	r.peak_device_bytes = peak;
	r.peak_host_bytes = evicted;
	r.bytes_evicted = evicted;
	r.oversubscribed_s = 1.5;
	r.alloc_latency_us.p99 = 12.0;
	r.end_reason = "completed";
	r.gpus = {GpuPart{}};
	r.gpus[0].pci_bus_id = bus;
	return r;
}

// The field after the nodes' parts went in, in this order, each through a
// full read-modify-write of the text as Slurm would hold it.
std::string written(std::string field, const std::vector<json> &parts)
{
	for (const auto &p : parts) {
		AdminComment c = split_admin_comment(field);
		merge_part(c.ours, p, three);
		field = join_admin_comment(c);
	}
	return field;
}

} // namespace

BOOST_AUTO_TEST_CASE(the_site_text_stays_around_our_segment)
{
	json p1 = node_part(report(10, 4, "0000:17:00.0"), "n1", 0);
	std::string f = written("project=climate; ticket 42", {p1});
	BOOST_TEST(f.rfind("project=climate; ticket 42 gpuoversub={", 0) == 0u);
	// Text the site adds after ours, with braces and quotes of its own, stays too.
	f += " note={\"x\": \"}\"}";
	json p2 = node_part(report(20, 6, "0000:18:00.0"), "n2", 0);
	f = written(f, {p2});
	AdminComment c = split_admin_comment(f);
	BOOST_TEST(c.site == "project=climate; ticket 42 note={\"x\": \"}\"}");
	BOOST_TEST(holds_part(c.ours, p1));
	BOOST_TEST(holds_part(c.ours, p2));
	BOOST_TEST(c.ours["peak_dev"] == 30u);
	BOOST_TEST(c.ours["evicted"] == 10u);
	BOOST_TEST(c.ours["missing"] == json({"n3"}));
}

BOOST_AUTO_TEST_CASE(every_order_of_the_nodes_gives_the_same_segment)
{
	std::vector<json> parts = {node_part(report(10, 1, "a"), "n1", 0), node_part(report(20, 2, "b"), "n2", 0),
				   node_part(report(30, 3, "c"), "n3", 0)};
	std::string first = written("", parts);
	std::sort(parts.begin(), parts.end());
	do {
		BOOST_TEST(written("", parts) == first);
	} while (std::next_permutation(parts.begin(), parts.end()));
	json ours = split_admin_comment(first).ours;
	BOOST_TEST(ours["missing"].empty());
	BOOST_TEST(ours["peak_dev"] == 60u);
	BOOST_TEST(ours["parts"].size() == 3u);
	BOOST_TEST(first.rfind("gpuoversub={", 0) == 0u);	// no site text, no leading space
}

BOOST_AUTO_TEST_CASE(a_node_writing_again_replaces_its_part_and_a_requeue_keeps_each_run)
{
	std::string f = written("", {node_part(report(10, 1, "a"), "n1", 0), node_part(report(15, 2, "a"), "n1", 0)});
	json ours = split_admin_comment(f).ours;
	BOOST_TEST(ours["parts"].size() == 1u);
	BOOST_TEST(ours["peak_dev"] == 15u);
	// Run 1 (Slurm's restart count) on other nodes: both runs kept, bytes
	// moved summed, the peak the larger run's, and missing nodes the last run's.
	f = written(f, {node_part(report(40, 5, "b"), "n2", 1)});
	ours = split_admin_comment(f).ours;
	BOOST_TEST(ours["parts"].size() == 2u);
	BOOST_TEST(ours["runs"] == 2u);
	BOOST_TEST(ours["evicted"] == 7u);
	BOOST_TEST(ours["peak_dev"] == 40u);
	BOOST_TEST(ours["missing"] == json({"n1", "n3"}));
}

BOOST_AUTO_TEST_CASE(the_old_whole_field_line_is_replaced_and_garbage_is_the_sites)
{
	// gpuoversub before the segment set the whole field to its compact line.
	AdminComment old = split_admin_comment("{\"gos\":1,\"peak_dev\":5}");
	BOOST_TEST(old.site.empty());
	BOOST_TEST(old.ours.empty());
	BOOST_TEST(!holds_part(old.ours, json::object()));
	merge_part(old.ours, node_part(report(10, 1, "a"), "n1", 0), three);
	BOOST_TEST(join_admin_comment(old).rfind("gpuoversub={", 0) == 0u);
	// A segment that does not parse is not ours to drop.
	AdminComment bad = split_admin_comment("gpuoversub={\"parts\": [");
	BOOST_TEST(bad.site == "gpuoversub={\"parts\": [");
	BOOST_TEST(bad.ours.empty());
	// Nor is a site's own "gpuoversub=" text that is not our segment.
	BOOST_TEST(split_admin_comment("gpuoversub=yes").site == "gpuoversub=yes");
	BOOST_TEST(join_admin_comment({"site", json::object()}) == "site");
}

BOOST_AUTO_TEST_CASE(a_requeued_job_without_nodes_keeps_the_nodes_known_before)
{
	AdminComment c;
	merge_part(c.ours, node_part(report(10, 1, "a"), "n1", 0), three);
	merge_part(c.ours, node_part(report(10, 1, "a"), "n2", 0), {});	// the record lost its nodes
	BOOST_TEST(c.ours["nodes"] == json(three));
	BOOST_TEST(c.ours["missing"] == json({"n3"}));
}
