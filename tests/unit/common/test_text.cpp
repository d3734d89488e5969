// Text a user chose, on its way to root's log and terminal (issue 24,
// findings 7 and 11): every log line carries its priority, and control
// characters are written as \xNN.
#define BOOST_TEST_MODULE text
#include <boost/test/unit_test.hpp>

#include "common/util/json_text.hpp"
#include "common/util/log.hpp"
#include "common/util/text.hpp"

BOOST_AUTO_TEST_CASE(control_characters_are_written_as_hex)
{
	BOOST_TEST(gos::escaped("node1") == "node1");
	BOOST_TEST(gos::escaped("\x1b]0;root\a") == "\\x1b]0;root\\x07");
	BOOST_TEST(gos::escaped("a\nb\r\x7f") == "a\\x0ab\\x0d\\x7f");
	BOOST_TEST(gos::escaped("gr\xc3\xbc\xc3\x9f") == "gr\xc3\xbc\xc3\x9f");	// UTF-8 stays
	BOOST_TEST(!gos::safe_text("a\tb"));
	BOOST_TEST(gos::safe_text("a b"));
	BOOST_TEST(gos::safe_text("gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x96\xa5"));
}

// Issue 31, finding 3: a node name with a lone 0x9b byte made every JSON
// dump of its job throw; as U+009B (CSI) it reached the log raw.
BOOST_AUTO_TEST_CASE(invalid_utf8_and_c1_and_bidi_controls_are_not_safe)
{
	struct Case {
		const char *text, *why, *escaped;
	};
	for (auto c : {Case{"n\x9b", "a lone continuation byte", "n\\x9b"},
		       Case{"n\xc2\x9b" "2J", "U+009B, CSI", "n\\xc2\\x9b2J"},
		       Case{"n\xc2\x85", "U+0085, NEL", "n\\xc2\\x85"},
		       Case{"a\xe2\x80\xae" "b", "U+202E, right-to-left override", "a\\xe2\\x80\\xaeb"},
		       Case{"a\xe2\x81\xa6" "b", "U+2066, left-to-right isolate", "a\\xe2\\x81\\xa6b"},
		       Case{"\xc0\xaf", "an overlong '/'", "\\xc0\\xaf"},
		       Case{"\xed\xa0\x80", "a UTF-16 surrogate", "\\xed\\xa0\\x80"},
		       Case{"\xf4\x90\x80\x80", "beyond U+10FFFF", "\\xf4\\x90\\x80\\x80"},
		       Case{"ab\xe2\x82", "a sequence cut short", "ab\\xe2\\x82"},
		       Case{"\xff", "a byte UTF-8 never has", "\\xff"}}) {
		BOOST_TEST_CONTEXT(c.why)
		{
			BOOST_TEST(!gos::safe_text(c.text));
			BOOST_TEST(gos::escaped(c.text) == c.escaped);
			BOOST_TEST(gos::safe_text(gos::escaped(c.text)));
		}
	}
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

// What a door missed still never fails a record: the bad byte becomes U+FFFD.
BOOST_AUTO_TEST_CASE(json_text_replaces_what_is_not_utf8)
{
	nlohmann::json j = {{"node", "n\x9b"}, {"ok", "gr\xc3\xbcn"}};
	BOOST_CHECK_THROW(static_cast<void>(j.dump()), nlohmann::json::type_error);
	BOOST_TEST(gos::json_text(j) == "{\"node\":\"n\xef\xbf\xbd\",\"ok\":\"gr\xc3\xbcn\"}");
}
