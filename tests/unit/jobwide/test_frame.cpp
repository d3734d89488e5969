// The job-wide channel's codec (issue 30, step 5): frames, answers and
// credential payloads survive a round trip, and each bad one is refused
// with its token, a frame too long on its header alone.
#define BOOST_TEST_MODULE jobwide_frame
#include <boost/test/unit_test.hpp>

#include <optional>
#include <string>

#include "common/jobwide/frame.hpp"

using namespace gos::jobwide;

namespace {

Frame good_frame()
{
	return {Kind::part, "node-0001.rack_2", 123456, "MUNGE:AwQFAAB" + std::string(300, 'x') + ":"};
}

Bytes encoded(const Frame &f)
{
	Bytes b;
	BOOST_REQUIRE(!encode_frame(f, b));
	return b;
}

std::string frame_refusal(const Bytes &b)
{
	Frame f;
	auto bad = decode_frame(b, f);
	return bad.value_or("accepted");
}

std::string encode_refusal(const Frame &f)
{
	Bytes b;
	return encode_frame(f, b).value_or("accepted");
}

Payload good_payload()
{
	return {123456, 2, 1733140000, "n0003", {"n0001", "n0002"}, R"({"node":"n0003","gpus":["0000:3b:00.0"]})"};
}

std::string payload_refusal(const std::string &text)
{
	Payload p;
	return decode_payload(text, p).value_or("accepted");
}

std::string answer_refusal(const std::string &line)
{
	Answer a;
	return decode_answer(line, a).value_or("accepted");
}

} // namespace

BOOST_AUTO_TEST_CASE(frame_round_trip)
{
	for (auto f : {good_frame(), Frame{Kind::part, std::string(64, 'n'), 0xffffffffu, std::string(12288, '~')},
		       Frame{Kind::part, "a", 1, "!"}}) {
		const Bytes b = encoded(f);
		BOOST_TEST(b.size() == frame_header_size + f.node.size() + f.credential.size());
		std::size_t total = 0;
		BOOST_TEST(!check_header(b, total));
		BOOST_TEST(total == b.size());
		Frame back;
		BOOST_TEST(!decode_frame(b, back));
		BOOST_TEST((back == f));
	}
}

BOOST_AUTO_TEST_CASE(frame_layout_is_little_endian)
{
	const Bytes b = encoded({Kind::part, "ab", 0x01020304, "c"});
	const Bytes want = {'G', 'O', 'S', 'J', 1, 1, 2, 0, 4, 3, 2, 1, 1, 0, 0, 0, 'a', 'b', 'c'};
	BOOST_TEST(b == want);
}

BOOST_AUTO_TEST_CASE(header_refusals)
{
	const Bytes good = encoded(good_frame());
	std::size_t total = 0;
	BOOST_TEST(*check_header(Bytes(good.begin(), good.begin() + frame_header_size - 1), total) == "short");
	auto with = [&](std::size_t at, std::uint8_t v) {
		Bytes b = good;
		b[at] = v;
		return frame_refusal(b);
	};
	BOOST_TEST(with(0, 'g') == "bad_magic");
	BOOST_TEST(with(4, 2) == "bad_version");
	BOOST_TEST(with(5, 0) == "bad_kind");
	BOOST_TEST(with(5, 2) == "bad_kind");
	BOOST_TEST(with(6, 0) == "bad_node");	// length 0
	BOOST_TEST(with(6, 65) == "bad_node");
	BOOST_TEST(with(7, 1) == "bad_node");	// 256 + the low byte
	Bytes zero_job = good;
	std::fill(zero_job.begin() + 8, zero_job.begin() + 12, 0);
	BOOST_TEST(frame_refusal(zero_job) == "bad_job");
	Bytes no_cred = good;
	std::fill(no_cred.begin() + 12, no_cred.begin() + 16, 0);
	BOOST_TEST(frame_refusal(no_cred) == "bad_credential");
}

BOOST_AUTO_TEST_CASE(a_frame_too_long_is_refused_on_its_header)
{
	Bytes header = encoded(good_frame());
	header.resize(frame_header_size);
	std::size_t total = 0;
	for (std::uint32_t cred : {12289u, 16384u, 0xffffffffu}) {
		for (std::size_t i = 0; i < 4; i++)
			header[12 + i] = static_cast<std::uint8_t>(cred >> (8 * i));
		BOOST_TEST(*check_header(header, total) == "oversize");
	}
	// The largest frame the fields allow is within the 16 KiB.
	BOOST_TEST(frame_header_size + node_max_bytes + credential_max_bytes <= frame_max_bytes);
}

BOOST_AUTO_TEST_CASE(body_refusals)
{
	const Bytes good = encoded(good_frame());
	BOOST_TEST(frame_refusal(Bytes(good.begin(), good.end() - 1)) == "short");
	Bytes trailing = good;
	trailing.push_back('x');
	BOOST_TEST(frame_refusal(trailing) == "trailing");
	for (char c : {' ', '/', ':', '\0', '\n', '\x80'}) {
		Bytes b = good;
		b[frame_header_size + 3] = static_cast<std::uint8_t>(c);
		BOOST_TEST(frame_refusal(b) == "bad_node", "node char " << int(c));
	}
	for (char c : {'\0', '\t', '\n', '\x7f', '\xff'}) {
		Bytes b = good;
		b[b.size() - 5] = static_cast<std::uint8_t>(c);
		BOOST_TEST(frame_refusal(b) == "bad_credential", "credential char " << int(c));
	}
}

BOOST_AUTO_TEST_CASE(encode_refuses_what_decode_would)
{
	auto f = good_frame();
	f.node = "";
	BOOST_TEST(encode_refusal(f) == "bad_node");
	f.node = std::string(65, 'n');
	BOOST_TEST(encode_refusal(f) == "bad_node");
	f.node = "n 1";
	BOOST_TEST(encode_refusal(f) == "bad_node");
	f = good_frame();
	f.job = 0;
	BOOST_TEST(encode_refusal(f) == "bad_job");
	f = good_frame();
	f.credential = "";
	BOOST_TEST(encode_refusal(f) == "bad_credential");
	f.credential = std::string(12289, 'x');
	BOOST_TEST(encode_refusal(f) == "oversize");
	f.credential = "MUNGE:\n";
	BOOST_TEST(encode_refusal(f) == "bad_credential");
	f = good_frame();
	f.kind = static_cast<Kind>(2);
	BOOST_TEST(encode_refusal(f) == "bad_kind");
}

BOOST_AUTO_TEST_CASE(answers)
{
	for (const Answer &a : {Answer{Answer::Word::ok, ""}, Answer{Answer::Word::dup, ""},
				Answer{Answer::Word::busy, ""}, Answer{Answer::Word::refused, "bad_node"}}) {
		std::string line;
		BOOST_TEST(!encode_answer(a, line));
		BOOST_TEST(line.back() == '\n');
		Answer back;
		BOOST_TEST(!decode_answer(line, back));
		BOOST_TEST((back == a));
	}
	std::string line;
	BOOST_TEST(!encode_answer({Answer::Word::refused, "not_member"}, line));
	BOOST_TEST(line == "refused not_member\n");
	BOOST_TEST(*encode_answer({Answer::Word::refused, ""}, line) == "bad_answer");
	BOOST_TEST(*encode_answer({Answer::Word::refused, "Bad"}, line) == "bad_answer");
	BOOST_TEST(*encode_answer({Answer::Word::ok, "x"}, line) == "bad_answer");
	BOOST_TEST(*encode_answer({Answer::Word::refused, std::string(120, 'x')}, line) == "oversize");
	BOOST_TEST(answer_refusal("refused " + std::string(119, 'x') + "\n") == "accepted");	// 128 bytes
	BOOST_TEST(answer_refusal("refused " + std::string(120, 'x') + "\n") == "oversize");
	for (const char *bad : {"", "ok", "ok \n", "OK\n", "ok\r\n", "okay\n", "dup x\n", "refused\n", "refused \n",
				"refused bad-node\n", "refused a b\n", "refused x\n\n", " ok\n"})
		BOOST_TEST(answer_refusal(bad) == "bad_answer", "answer " << bad);
}

// A sealed answer (issue 50): the plain answer bound to the part it
// answers, and the line that carries the credential.
BOOST_AUTO_TEST_CASE(sealed_answers)
{
	const AnswerTo to{42, 1733140000, "n2"};
	for (const Answer &a : {Answer{Answer::Word::ok, ""}, Answer{Answer::Word::busy, ""},
				Answer{Answer::Word::refused, "not_its_frame"}}) {
		std::string text;
		BOOST_TEST_REQUIRE(!encode_answer_payload(a, to, text));
		Answer back;
		BOOST_TEST(!decode_answer_payload(text, to, back));
		BOOST_TEST((back == a));
		// Another part's answer is not this one's.
		for (const AnswerTo &other : {AnswerTo{43, to.start, to.node}, AnswerTo{to.job, to.start + 1, to.node},
					      AnswerTo{to.job, to.start, "n3"}})
			BOOST_TEST(*decode_answer_payload(text, other, back) == "not_this_part");
	}
	std::string text;
	BOOST_TEST(*encode_answer_payload({Answer::Word::refused, "Bad"}, to, text) == "bad_answer");
	BOOST_TEST(*encode_answer_payload({Answer::Word::ok, ""}, {0, 1, "n2"}, text) == "bad_answer");
	Answer back;
	for (const char *bad : {"", "{}", "[]", R"({"answer":"ok","job":42,"start":1733140000})",
				R"({"answer":"ok","job":42,"start":1733140000,"node":"n2","x":1})",
				R"({"answer":"okay","job":42,"start":1733140000,"node":"n2"})",
				R"({"answer":"ok","job":"42","start":1733140000,"node":"n2"})",
				R"({"answer":"ok","job":42,"start":1.5,"node":"n2"})"})
		BOOST_TEST(decode_answer_payload(bad, to, back).has_value(), "payload " << bad);

	std::string line;
	BOOST_TEST(!encode_sealed_line("MUNGE:abc:", line));
	BOOST_TEST(line == "sealed MUNGE:abc:\n");
	BOOST_TEST(*sealed_credential(line) == "MUNGE:abc:");
	BOOST_TEST(*encode_sealed_line("", line) == "bad_answer");
	BOOST_TEST(*encode_sealed_line("a\nb", line) == "bad_answer");
	BOOST_TEST(*encode_sealed_line(std::string(sealed_answer_max_bytes, 'x'), line) == "oversize");
	for (const char *plain : {"ok\n", "sealed \n", "sealed x", "sealedx\n", "sealed a\tb\n"})
		BOOST_TEST(!sealed_credential(plain), "line " << plain);
	BOOST_TEST(!sealed_credential("sealed " + std::string(sealed_answer_max_bytes, 'x') + "\n"));
}

BOOST_AUTO_TEST_CASE(payload_round_trip)
{
	for (auto p : {good_payload(), Payload{1, 0, -5, "a", {"a"}, ""}}) {
		std::string text;
		BOOST_TEST(!encode_payload(p, text));
		Payload back;
		BOOST_TEST(!decode_payload(text, back));
		BOOST_TEST((back == p));
	}
	std::string text;
	BOOST_TEST(!encode_payload({7, 1, 100, "n2", {"n1"}, "{}"}, text));
	BOOST_TEST(text == R"({"job":7,"node":"n2","part":"{}","run":1,"start":100,"writers":["n1"]})");
}

BOOST_AUTO_TEST_CASE(payload_size)
{
	auto p = good_payload();
	std::string text;
	BOOST_TEST(!encode_payload(p, text));
	p.part += std::string(payload_max_bytes - text.size(), 'x');
	BOOST_TEST(!encode_payload(p, text));
	BOOST_TEST(text.size() == payload_max_bytes);
	BOOST_TEST(payload_refusal(text) == "accepted");
	p.part += 'x';
	BOOST_TEST(*encode_payload(p, text) == "oversize");
	BOOST_TEST(payload_refusal(std::string(payload_max_bytes + 1, ' ')) == "oversize");
}

BOOST_AUTO_TEST_CASE(payload_refusals)
{
	const std::string rest = R"("node":"n2","part":"{}","run":1,"start":100,"writers":["n1"])";
	BOOST_TEST(payload_refusal(R"({"job":7,)" + rest + "}") == "accepted");
	BOOST_TEST(payload_refusal(R"({"job":7,)" + rest) == "bad_json");
	BOOST_TEST(payload_refusal("") == "bad_json");
	BOOST_TEST(payload_refusal("[]") == "bad_payload");
	BOOST_TEST(payload_refusal("{" + rest + "}") == "bad_payload");	// no job
	BOOST_TEST(payload_refusal(R"({"job":7,"extra":1,)" + rest + "}") == "bad_payload");
	BOOST_TEST(payload_refusal(R"({"JOB":7,)" + rest + "}") == "bad_payload");
	for (const char *job : {R"("7")", "7.0", "-7", "4294967296", "null", "true"})
		BOOST_TEST(payload_refusal(R"({"job":)" + std::string(job) + "," + rest + "}") == "bad_payload",
			   "job " << job);
	BOOST_TEST(payload_refusal(R"({"job":0,)" + rest + "}") == "bad_job");
	auto with = [](std::string key, std::string value) {
		std::string text = R"({"job":7,"node":"n2","part":"p","run":1,"start":100,"writers":["n1"]})";
		const auto at = text.find('"' + key + "\":") + key.size() + 3;
		const auto end = key == "writers" ? text.find(']', at) + 1 : text.find_first_of(",}", at);
		return payload_refusal(text.replace(at, end - at, value));
	};
	BOOST_TEST(with("run", "-1") == "bad_payload");
	BOOST_TEST(with("run", "1.5") == "bad_payload");
	BOOST_TEST(with("start", "9223372036854775808") == "bad_payload");
	BOOST_TEST(with("start", "-9223372036854775808") == "accepted");
	BOOST_TEST(with("start", R"("100")") == "bad_payload");
	BOOST_TEST(with("node", "2") == "bad_payload");
	BOOST_TEST(with("node", R"("")") == "bad_node");
	BOOST_TEST(with("node", R"("n/2")") == "bad_node");
	BOOST_TEST(with("part", "{}") == "bad_payload");
	BOOST_TEST(with("part", R"("{\"gpus\":[]}")") == "accepted");
	BOOST_TEST(with("writers", R"("n1")") == "bad_payload");
	BOOST_TEST(with("writers", "[]") == "bad_payload");
	BOOST_TEST(with("writers", R"(["n1","n2","n3"])") == "bad_payload");
	BOOST_TEST(with("writers", R"(["n1",2])") == "bad_payload");
	BOOST_TEST(with("writers", R"(["n1","n 2"])") == "bad_node");
	BOOST_TEST(with("writers", R"(["n1","n2"])") == "accepted");
}

BOOST_AUTO_TEST_CASE(encode_payload_refusals)
{
	std::string text;
	auto p = good_payload();
	p.job = 0;
	BOOST_TEST(*encode_payload(p, text) == "bad_job");
	p = good_payload();
	p.writers = {};
	BOOST_TEST(*encode_payload(p, text) == "bad_payload");
	p.writers = {"n1", "n2", "n3"};
	BOOST_TEST(*encode_payload(p, text) == "bad_payload");
	p = good_payload();
	p.node = "n:3";
	BOOST_TEST(*encode_payload(p, text) == "bad_node");
	p = good_payload();
	p.part = "\xff";	// not UTF-8
	BOOST_TEST(*encode_payload(p, text) == "bad_payload");
}
