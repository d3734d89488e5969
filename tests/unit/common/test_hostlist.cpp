// Slurm's hostlist syntax without libslurm (issue 30, step 1): names
// compressed into ranges zero-padded as Slurm pads them, expressions
// expanded back, and malformed or hostile ones refused with the reason
// before anything large is allocated. The round trip against scontrol
// itself is tests/integration/slurm/hostlist.bats.
#define BOOST_TEST_MODULE hostlist
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "common/util/hostlist.hpp"

using gos::compress_hostlist;
using gos::compress_hostlist_within;
using gos::expand_hostlist;
using gos::HostlistError;
using Names = std::vector<std::string>;

namespace {

Names sorted(Names n)
{
	std::sort(n.begin(), n.end());
	n.erase(std::unique(n.begin(), n.end()), n.end());
	return n;
}

// The reason a malformed expression is refused with.
std::string refusal(const std::string &expression)
{
	try {
		expand_hostlist(expression);
	} catch (const HostlistError &e) {
		return e.what();
	}
	return "";
}

} // namespace

BOOST_AUTO_TEST_CASE(names_sharing_prefix_and_width_make_ranges)
{
	BOOST_TEST(compress_hostlist({"n0001", "n0002", "n0003", "n0004", "n0007", "gpu12"}) == "gpu12,n[0001-0004,0007]");
	BOOST_TEST(compress_hostlist({"n9", "n10", "n11", "n8"}) == "n[8-11]");	// unpadded: any width
	BOOST_TEST(compress_hostlist({"n09", "n10", "n9"}) == "n[9,09-10]");	// 09 is padded, 9 not
	BOOST_TEST(compress_hostlist({"n0999", "n1000", "n1001"}) == "n[0999-1001]");
	BOOST_TEST(compress_hostlist({"n098", "n099", "n100", "n1000"}) == "n[1000,098-100]");
	BOOST_TEST(compress_hostlist({"n3", "n3", "n1"}) == "n[1,3]");	// a set: repeats once
	BOOST_TEST(compress_hostlist({"a1b2", "a1b3", "x", "login"}) == "a1b[2-3],login,x");
	BOOST_TEST(compress_hostlist({"7", "8"}) == "[7-8]");
	BOOST_TEST(compress_hostlist({"n0"}) == "n0");
	BOOST_TEST(compress_hostlist({}) == "");
}

BOOST_AUTO_TEST_CASE(expressions_expand_as_slurm_expands_them)
{
	BOOST_TEST(expand_hostlist("n[0001-0003,0007],gpu12") == Names({"n0001", "n0002", "n0003", "n0007", "gpu12"}));
	BOOST_TEST(expand_hostlist("n[8-10]") == Names({"n8", "n9", "n10"}));
	BOOST_TEST(expand_hostlist("n[08-10]") == Names({"n08", "n09", "n10"}));
	BOOST_TEST(expand_hostlist("n[098-100]") == Names({"n098", "n099", "n100"}));
	BOOST_TEST(expand_hostlist("n[1-2]x[1-2]") == Names({"n1x1", "n1x2", "n2x1", "n2x2"}));
	BOOST_TEST(expand_hostlist("n[1-2],,n3") == Names({"n1", "n2", "n3"}));
	BOOST_TEST(expand_hostlist("a,a") == Names({"a", "a"}));
	BOOST_TEST(expand_hostlist("").empty());
}

BOOST_AUTO_TEST_CASE(malformed_expressions_are_refused_with_the_reason)
{
	BOOST_TEST(refusal("n[1-3").find("never closes") != std::string::npos);
	BOOST_TEST(refusal("n1]").find("never opened") != std::string::npos);
	BOOST_TEST(refusal("n[[1]]").find("inside another") != std::string::npos);
	BOOST_TEST(refusal("n[3-1]").find("reversed") != std::string::npos);
	BOOST_TEST(refusal("n[]").find("no number") != std::string::npos);
	BOOST_TEST(refusal("n[1-]").find("no number") != std::string::npos);
	BOOST_TEST(refusal("n[a-b]").find("no number") != std::string::npos);
	BOOST_TEST(refusal("n[1-2-3]").find("no number") != std::string::npos);
	BOOST_TEST(refusal("n[1234567890123456789]").find("no number") != std::string::npos);
	BOOST_CHECK_THROW(compress_hostlist({"a,b"}), HostlistError);
	BOOST_CHECK_THROW(compress_hostlist({"a[1]"}), HostlistError);
	BOOST_CHECK_THROW(compress_hostlist({"a b"}), HostlistError);
	BOOST_CHECK_THROW(compress_hostlist({""}), HostlistError);
}

// A hostile string is refused on its counts, before any name is made.
BOOST_AUTO_TEST_CASE(expansion_is_bounded)
{
	BOOST_TEST(expand_hostlist("n[1-65536]").size() == 65536u);
	BOOST_TEST(refusal("n[0-70000]").find("more than 65536") != std::string::npos);
	BOOST_TEST(refusal("n[1-65536],x").find("more than 65536") != std::string::npos);
	BOOST_TEST(refusal("n[1-256][1-256][1-256]").find("more than 65536") != std::string::npos);
	BOOST_TEST(refusal("n[0-999999999999999999]").find("more than 65536") != std::string::npos);
	BOOST_TEST(refusal(std::string(300, 'a') + "[1-2]").find("longer than 255") != std::string::npos);
	BOOST_TEST(expand_hostlist("n[1-20]", 20).size() == 20u);
	BOOST_CHECK_THROW(expand_hostlist("n[1-21]", 20), HostlistError);
}

BOOST_AUTO_TEST_CASE(compressed_names_expand_to_the_same_set)
{
	std::mt19937 random(30);
	for (int round = 0; round < 200; round++) {
		Names names;
		int n = std::uniform_int_distribution(0, 60)(random);
		for (int i = 0; i < n; i++) {
			int v = std::uniform_int_distribution(0, 120)(random);
			std::string digits = std::to_string(v);
			switch (std::uniform_int_distribution(0, 3)(random)) {
			case 0: names.push_back("n" + digits); break;
			case 1: names.push_back("n" + std::string(digits.size() < 4 ? 4 - digits.size() : 0, '0') + digits); break;
			case 2: names.push_back("gpu" + digits + "-ib"); break;
			default: names.push_back("r" + std::to_string(v % 3) + "c" + digits);
			}
		}
		std::string e = compress_hostlist(names);
		BOOST_TEST_CONTEXT(e) { BOOST_TEST(sorted(expand_hostlist(e)) == sorted(names)); }
	}
}

// The record's `missing`: cut at whole ranges, the rest counted.
BOOST_AUTO_TEST_CASE(a_cut_keeps_whole_ranges_and_counts_the_rest)
{
	Names names;
	for (int i = 1; i <= 1000; i += 2)	// no two consecutive: 500 ranges
		names.push_back("node" + std::to_string(i));
	names.push_back("zz");
	auto all = compress_hostlist_within(names, 1u << 20);
	BOOST_TEST(all.left_out == 0u);
	BOOST_TEST(all.text == compress_hostlist(names));
	Names whole = expand_hostlist(all.text);
	for (std::size_t max : {0u, 4u, 5u, 6u, 10u, 11u, 100u, 2048u}) {
		auto cut = compress_hostlist_within(names, max);
		BOOST_TEST_CONTEXT(max << ": " << cut.text)
		{
			BOOST_TEST(cut.text.size() <= max);
			Names kept = expand_hostlist(cut.text);
			BOOST_TEST(kept.size() + cut.left_out == names.size());
			BOOST_TEST(std::equal(kept.begin(), kept.end(), whole.begin()));	// the first names
		}
	}
	BOOST_TEST(compress_hostlist_within(names, 5).text == "node1");
	BOOST_TEST(compress_hostlist_within(names, 10).text == "node[1,3]");
	BOOST_TEST(compress_hostlist_within({"a", "b"}, 1).text == "a");
	BOOST_TEST(compress_hostlist_within({"a", "b"}, 1).left_out == 1u);
}
