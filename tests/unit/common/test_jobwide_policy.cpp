// The job-wide channel's keys of the policy (jobwide: in gpuoversub.yaml(5)):
// their defaults, each one read, each bad value refused with file, line and
// column, and the reload naming those fixed at start.
#define BOOST_TEST_MODULE jobwide_policy
#include <boost/test/unit_test.hpp>

#include "common/config/config.hpp"
#include "tests/unit/common/config_error.hpp"

using namespace gos;
using config::RecordHelper;
using gos_test::config_error;

BOOST_AUTO_TEST_CASE(without_the_keys_the_defaults_of_docs_jobwide)
{
	auto c = config::parse_config("", "p.yaml");
	BOOST_TEST(c.start.jobwide_port == 6828u);
	BOOST_TEST(c.start.jobwide_listen.empty());	// all addresses
	BOOST_TEST(c.start.jobwide_munge_socket == "/run/munge/munge.socket.2");
	BOOST_TEST(c.start.jobwide_reserved_ports);
	const auto &j = c.policy.jobwide;
	BOOST_TEST(j.wait_ns == 60'000'000'000u);
	BOOST_TEST(j.failover_after_ns == 60'000'000'000u);
	BOOST_TEST(j.send_for_ns == 600'000'000'000u);
	BOOST_TEST(j.keep_ns == 3'600'000'000'000u);
	BOOST_TEST(j.max_nodes == 16384u);
	BOOST_TEST((j.record_helper == RecordHelper::socket));
	// An empty mapping is the defaults too.
	BOOST_TEST((config::parse_config("jobwide: {}\n", "p.yaml").policy.jobwide == j));
}

BOOST_AUTO_TEST_CASE(each_key_is_read)
{
	auto c = config::parse_config("jobwide:\n  port: 7000\n  listen: 10.1.2.3\n  munge_socket: /run/m/s\n"
				      "  reserved_ports: false\n  wait: 5s\n  failover_after: 5s\n  send_for: 1m\n  keep: 0s\n"
				      "  max_nodes: 65536\n  record_helper: direct\n",
				      "p.yaml");
	BOOST_TEST(c.start.jobwide_port == 7000u);
	BOOST_TEST(c.start.jobwide_listen == "10.1.2.3");
	BOOST_TEST(c.start.jobwide_munge_socket == "/run/m/s");
	BOOST_TEST(!c.start.jobwide_reserved_ports);
	const auto &j = c.policy.jobwide;
	BOOST_TEST(j.wait_ns == 5'000'000'000u);
	BOOST_TEST(j.failover_after_ns == 5'000'000'000u);
	BOOST_TEST(j.send_for_ns == 60'000'000'000u);
	BOOST_TEST(j.keep_ns == 0u);
	BOOST_TEST(j.max_nodes == 65536u);
	BOOST_TEST((j.record_helper == RecordHelper::direct));
	BOOST_TEST(config::parse_config("jobwide: {listen: '::1'}\n", "p.yaml").start.jobwide_listen == "::1");
	BOOST_TEST(config::parse_config("jobwide: {listen: 'fd00::17'}\n", "p.yaml").start.jobwide_listen == "fd00::17");
	BOOST_TEST(config::parse_config("jobwide: {listen: ''}\n", "p.yaml").start.jobwide_listen.empty());
	BOOST_TEST(config::parse_config("jobwide: {port: 1}\n", "p.yaml").start.jobwide_port == 1u);
	BOOST_TEST(config::parse_config("jobwide: {port: 65535}\n", "p.yaml").start.jobwide_port == 65535u);
	BOOST_TEST((config::parse_config("jobwide: {record_helper: none}\n", "p.yaml").policy.jobwide.record_helper ==
		    RecordHelper::none));
	// send_for equal to wait is enough.
	BOOST_TEST(config::parse_config("jobwide: {wait: 2m, send_for: 2m}\n", "p.yaml").policy.jobwide.send_for_ns ==
		   120'000'000'000u);
}

BOOST_AUTO_TEST_CASE(each_bad_value_names_file_line_and_column)
{
	struct { const char *yaml, *expect; } cases[] = {
		{"jobwide: {port: 0}\n", "p.yaml:1:17: 'jobwide.port' must be a number from 1 to 65535, not '0'"},
		{"jobwide: {port: 65536}\n", "p.yaml:1:17: 'jobwide.port' must be a number from 1 to 65535, not '65536'"},
		{"jobwide: {port: 80.5}\n", "p.yaml:1:17: 'jobwide.port' must be a whole number"},
		{"jobwide: {port: http}\n", "p.yaml:1:17: 'jobwide.port' must be a number from 1 to 65535, not 'http'"},
		{"jobwide: {listen: head.example.org}\n",
		 "p.yaml:1:19: 'jobwide.listen' must be a numeric IPv4 or IPv6 address, or empty for all, not 'head.example.org'"},
		{"jobwide: {listen: 10.1.2}\n", "p.yaml:1:19: 'jobwide.listen' must be a numeric IPv4 or IPv6 address"},
		{"jobwide: {listen: '10.0.0.1:6828'}\n", "p.yaml:1:19: 'jobwide.listen' must be a numeric IPv4 or IPv6 address"},
		{"jobwide: {listen: '[::1]'}\n", "p.yaml:1:19: 'jobwide.listen' must be a numeric IPv4 or IPv6 address"},
		{"jobwide: {listen: [10.0.0.1]}\n", "p.yaml:1:19: 'jobwide.listen' must be a single value"},
		{"jobwide: {munge_socket: munge.socket.2}\n",
		 "p.yaml:1:25: 'jobwide.munge_socket' must be an absolute path, not 'munge.socket.2'"},
		{"jobwide: {wait: 0s}\n", "p.yaml:1:17: 'jobwide.wait' must be a duration such as 500ms, 10s or 5m above zero, not '0s'"},
		{"jobwide: {wait: long}\n", "p.yaml:1:17: 'jobwide.wait' must be a duration"},
		{"jobwide: {failover_after: 0s}\n",
		 "p.yaml:1:27: 'jobwide.failover_after' must be a duration such as 500ms, 10s or 5m above zero"},
		{"jobwide: {send_for: 0s}\n", "p.yaml:1:21: 'jobwide.send_for' must be a duration such as 500ms, 10s or 5m above zero"},
		{"jobwide: {keep: -1s}\n", "p.yaml:1:17: 'jobwide.keep' must be a duration such as 500ms, 10s or 5m, not '-1s'"},
		{"jobwide: {max_nodes: 0}\n", "p.yaml:1:22: 'jobwide.max_nodes' must be a number from 1 to 65536, not '0'"},
		{"jobwide: {max_nodes: 65537}\n", "p.yaml:1:22: 'jobwide.max_nodes' must be a number from 1 to 65536"},
		{"jobwide: {max_nodes: 1.5}\n", "p.yaml:1:22: 'jobwide.max_nodes' must be a whole number"},
		{"jobwide: {record_helper: sudo}\n",
		 "p.yaml:1:26: 'jobwide.record_helper' must be one of direct, none, socket, not 'sudo'"},
		{"jobwide: {tree_above: 4096}\n",
		 "p.yaml:1:23: unknown key 'tree_above' in 'jobwide'; use port, listen, munge_socket, reserved_ports, wait, "
		 "failover_after, send_for, keep, max_nodes or record_helper"},
		{"jobwide: {reserved_ports: maybe}\n",
		 "p.yaml:1:27: 'jobwide.reserved_ports' must be true or false, not 'maybe'"},
		{"jobwide: {wait: 1s, wait: 2s}\n", "p.yaml:1:21: 'wait' is given twice"},
		{"jobwide: 6828\n", "p.yaml:1:10: 'jobwide' must be a mapping"},
		// A sender that gives up before the writer stops waiting leaves
		// its part missing for nothing: at the key that makes it so.
		{"jobwide: {wait: 2m, send_for: 1m}\n",
		 "p.yaml:1:31: 'jobwide.send_for' must not be shorter than 'jobwide.wait': a sender would give up "
		 "while the writer still waits for its part"},
		{"jobwide:\n  wait: 11m\n", "p.yaml:2:9: 'jobwide.send_for' must not be shorter than 'jobwide.wait'"},
	};
	for (auto &c : cases) {
		std::string got = config_error(c.yaml);
		BOOST_TEST(got.rfind(c.expect, 0) == 0u, "for:\n" << c.yaml << "got: " << got);
	}
}

BOOST_AUTO_TEST_CASE(a_reload_names_the_doors_settings_and_applies_the_rest)
{
	auto running = config::parse_config("", "a.yaml");
	auto next = config::parse_config("jobwide: {port: 7000, listen: 10.0.0.1, munge_socket: /run/m.sock, "
					 "reserved_ports: no, wait: 5s, failover_after: 5s, send_for: 1m, keep: 0s, max_nodes: 8, "
					 "record_helper: none}\n",
					 "b.yaml");
	BOOST_TEST(config::restart_only_changes(running.start, next.start) ==
		   (std::vector<std::string>{"jobwide.port", "jobwide.listen", "jobwide.munge_socket",
					     "jobwide.reserved_ports"}),
		   boost::test_tools::per_element());
	auto listen = config::parse_config("jobwide: {listen: '::'}\n", "c.yaml");
	BOOST_TEST(config::restart_only_changes(running.start, listen.start) ==
		   (std::vector<std::string>{"jobwide.listen"}), boost::test_tools::per_element());
	// The policy's keys alone change nothing fixed at start.
	auto policy = config::parse_config("jobwide: {wait: 5s, keep: 0s, record_helper: direct}\n", "d.yaml");
	BOOST_TEST(config::restart_only_changes(running.start, policy.start).empty());
	BOOST_TEST(!(policy.policy.jobwide == running.policy.jobwide));
}

BOOST_AUTO_TEST_CASE(the_shipped_policy_lists_the_defaults)
{
	auto shipped = config::load_config("config/gpuoversub.yaml");
	auto none = config::parse_config("", "empty.yaml");
	BOOST_TEST((shipped.policy.jobwide == none.policy.jobwide));
	BOOST_TEST(config::restart_only_changes(none.start, shipped.start).empty());
}
