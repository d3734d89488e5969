// The policy loader's limits (issue 13, finding 7): what is not a regular
// file is refused before it is read, an oversize file before it is parsed,
// and deep nesting or too many values while the events are walked, each
// with a clear message and fast.
#define BOOST_TEST_MODULE policy_limits
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/config/config.hpp"

namespace fs = std::filesystem;
using gos::config::ConfigError;

namespace {

std::string load_error(const std::string &path)
{
	try {
		gos::config::load_config(path);
	} catch (const ConfigError &e) {
		return e.what();
	}
	return "";
}

std::string parse_error(const std::string &text)
{
	try {
		gos::config::parse_config(text, "p.yaml");
	} catch (const ConfigError &e) {
		return e.what();
	}
	return "";
}

std::string repeat(const std::string &s, std::size_t n)
{
	std::string out;
	out.reserve(s.size() * n);
	for (std::size_t i = 0; i < n; i++)
		out += s;
	return out;
}

} // namespace

BOOST_AUTO_TEST_CASE(only_a_regular_file_is_read)
{
	BOOST_TEST(load_error("/tmp") == "/tmp: is a directory; a regular file is needed (the policy file)");
	BOOST_TEST(load_error("/dev/zero") == "/dev/zero: is a device; a regular file is needed (the policy file)");
	std::string fifo = fs::temp_directory_path() / ("gos-policy-fifo-" + std::to_string(::getpid()));
	BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
	std::string got = load_error(fifo);	// no writer: must not block
	fs::remove(fifo);
	BOOST_TEST(got == fifo + ": is a FIFO; a regular file is needed (the policy file)");
}

BOOST_AUTO_TEST_CASE(an_oversize_file_is_refused_with_its_size)
{
	std::string path = fs::temp_directory_path() / ("gos-policy-big-" + std::to_string(::getpid()));
	std::ofstream(path) << repeat("# a comment line\n", 70000);	// 1,190,000 bytes
	std::string got = load_error(path);
	fs::remove(path);
	BOOST_TEST(got == path + ": is 1190000 bytes, more than the limit of 1 MiB (the policy file)");
}

BOOST_AUTO_TEST_CASE(deep_nesting_is_refused_at_the_level_past_the_limit)
{
	BOOST_TEST(parse_error(repeat("{a: ", 33) + "1" + repeat("}", 33)) ==
		   "p.yaml:1:129: nested more than 32 levels deep; a policy needs a few");
	BOOST_TEST(parse_error(repeat("[", 40) + repeat("]", 40)) ==
		   "p.yaml:1:33: nested more than 32 levels deep; a policy needs a few");
	// 32 levels is within the limit: the loader itself answers.
	BOOST_TEST(parse_error(repeat("[", 32) + repeat("]", 32)).find("must be a mapping") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_megabyte_of_nested_flow_mappings_is_refused_fast)
{
	std::size_t n = ((1u << 20) - 2) / 5;	// "{a: " and "}" per level, within the size cap
	std::string text = repeat("{a: ", n) + "1" + repeat("}", n);
	BOOST_REQUIRE(text.size() <= gos::config::max_file_bytes);
	auto t0 = std::chrono::steady_clock::now();
	std::string got = parse_error(text);
	auto took = std::chrono::steady_clock::now() - t0;
	BOOST_TEST(got == "p.yaml:1:129: nested more than 32 levels deep; a policy needs a few");
	BOOST_TEST(took < std::chrono::seconds(1), "took " << std::chrono::duration<double>(took).count() << " s");
}

BOOST_AUTO_TEST_CASE(too_many_values_are_refused)
{
	std::string text = "weights: {partition: [" + repeat("1, ", 100001) + "1]}\n";
	BOOST_TEST(parse_error(text).find("p.yaml:1:") == 0u);
	BOOST_TEST(parse_error(text).find("more than 100000 values; a policy needs a few hundred") != std::string::npos);
}
