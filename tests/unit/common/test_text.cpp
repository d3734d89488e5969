// Text a user chose, on its way to root's log and terminal (issue 24,
// findings 7 and 11): every log line carries its priority, and control
// characters are written as \xNN.
#define BOOST_TEST_MODULE text
#include <boost/test/unit_test.hpp>

#include "common/util/log.hpp"
#include "common/util/text.hpp"

BOOST_AUTO_TEST_CASE(control_characters_are_written_as_hex)
{
	BOOST_TEST(gos::escaped("node1") == "node1");
	BOOST_TEST(gos::escaped("\x1b]0;root\a") == "\\x1b]0;root\\x07");
	BOOST_TEST(gos::escaped("a\nb\r\x7f") == "a\\x0ab\\x0d\\x7f");
	BOOST_TEST(gos::escaped("gr\xc3\xbc\xc3\x9f") == "gr\xc3\xbc\xc3\x9f");	// UTF-8 stays
	BOOST_TEST(gos::has_control("a\tb"));
	BOOST_TEST(!gos::has_control("a b"));
}

BOOST_AUTO_TEST_CASE(every_line_of_a_message_carries_its_priority)
{
	using gos::log::records;
	BOOST_TEST(records(gos::log::info, "one line") == "<6>one line\n");
	BOOST_TEST(records(gos::log::notice, "report\n  peak\n  evicted\n") == "<5>report\n<5>  peak\n<5>  evicted\n");
	// A user's name with a newline, left unescaped by its caller, forges
	// no record of its own priority: the line is the caller's level's.
	std::string forged = records(gos::log::info, "rank 0 on node1\n<3>job 101 reaped: root says so");
	BOOST_TEST_MESSAGE("logged as: " << forged);
	BOOST_TEST(forged == "<6>rank 0 on node1\n<6><3>job 101 reaped: root says so\n");
	BOOST_TEST(records(gos::log::error, "bell\a esc\x1b[2J cr\r") == "<3>bell\\x07 esc\\x1b[2J cr\\x0d\n");
}
