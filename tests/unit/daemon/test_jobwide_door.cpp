// The job-wide door's first checks: what one address may cost (connections
// and frames), and Slurm's node table that a sender's address is checked
// against: its parsing, when it is read again, and the address match.
#define BOOST_TEST_MODULE jobwide_door
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>

#include "daemon/gpud/door_limits.hpp"
#include "daemon/gpud/node_table.hpp"

using namespace gos::gpud;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

BOOST_AUTO_TEST_CASE(connections_are_bounded_in_all_and_per_address)
{
	DoorLimits door({.connections = 6, .per_address = 4});
	auto t = Clock::now();
	for (int i = 0; i < 4; i++)
		BOOST_TEST(name_of(door.connect("10.0.0.1", t)) == "ok");
	BOOST_TEST(name_of(door.connect("10.0.0.1", t)) == "busy_address");
	BOOST_TEST(name_of(door.connect("10.0.0.2", t)) == "ok");
	BOOST_TEST(name_of(door.connect("10.0.0.3", t)) == "ok");
	BOOST_TEST(name_of(door.connect("10.0.0.4", t)) == "busy");
	BOOST_TEST(door.open() == 6u);
	door.disconnect("10.0.0.1");
	door.disconnect("10.0.0.9");	// never connected: no effect
	BOOST_TEST(door.open() == 5u);
	BOOST_TEST(name_of(door.connect("10.0.0.4", t)) == "ok");
}

BOOST_AUTO_TEST_CASE(frames_per_address_are_a_token_bucket)
{
	DoorLimits door({.frames_per_s = 16, .burst = 64});
	auto t = Clock::now();
	BOOST_TEST(name_of(door.frame("10.0.0.1", t)) == "rate");	// no connection: never
	door.connect("10.0.0.1", t);
	int passed = 0;
	for (int i = 0; i < 100; i++)
		passed += door.frame("10.0.0.1", t) == DoorAdmit::ok;
	BOOST_TEST(passed == 64);
	BOOST_TEST(name_of(door.frame("10.0.0.1", t + 1s)) == "ok");	// 16 more a second
	door.connect("10.0.0.2", t);
	BOOST_TEST(name_of(door.frame("10.0.0.2", t)) == "ok");	// another address has its own
	// A reconnection does not refill the bucket.
	door.disconnect("10.0.0.1");
	door.connect("10.0.0.1", t + 1s);
	int again = 0;
	for (int i = 0; i < 64; i++)
		again += door.frame("10.0.0.1", t + 1s) == DoorAdmit::ok;
	BOOST_TEST(again == 15);
}

BOOST_AUTO_TEST_CASE(addresses_remembered_are_bounded)
{
	DoorLimits door({.connections = 16, .per_address = 4, .frames_per_s = 16, .burst = 64, .addresses = 8});
	auto t = Clock::now();
	for (int i = 0; i < 8; i++) {
		std::string a = "10.0.1." + std::to_string(i);
		BOOST_TEST(name_of(door.connect(a, t)) == "ok");
		door.disconnect(a);
	}
	// Full of addresses whose buckets have not refilled: a ninth is busy.
	BOOST_TEST(name_of(door.connect("10.0.2.1", t + 1s)) == "busy");
	// Once they have refilled (64 at 16 a second: 4 s) they are forgotten.
	BOOST_TEST(name_of(door.connect("10.0.2.1", t + 5s)) == "ok");
	BOOST_TEST(door.remembered() == 1u);
}

BOOST_AUTO_TEST_CASE(node_addrs_output_is_parsed_and_garbage_noted)
{
	NodeAddrs a = parse_node_addrs("addr n1 10.0.0.1\naddr n2 node2.example\naddr n3\naddr n4 1 2\nwhat\n");
	BOOST_TEST(a.addr.size() == 2u);
	BOOST_TEST(a.addr["n2"] == "node2.example");
	BOOST_TEST(a.garbled.size() == 3u);
	BOOST_TEST(a.unavailable.empty());
	NodeAddrs none = parse_node_addrs("unavailable nodes slurmctld: Unable to contact slurm controller\n");
	BOOST_TEST(none.addr.empty());
	BOOST_TEST(none.unavailable == "slurmctld: Unable to contact slurm controller");
}

BOOST_AUTO_TEST_CASE(the_table_is_read_first_after_its_delay_then_on_a_miss_at_most_each_period)
{
	auto t = Clock::now();
	NodeTable table(t, 30s, 10min);
	BOOST_TEST(!table.due(t));
	BOOST_TEST(table.due(t + 30s));
	table.take(parse_node_addrs("addr n1 10.0.0.1\n"), t + 30s);
	BOOST_TEST(!table.due(t + 31s));
	BOOST_TEST(*table.address_of("n1") == "10.0.0.1");
	BOOST_TEST(!table.due(t + 20min));	// no miss: never read again
	BOOST_TEST(!table.address_of("n2"));
	BOOST_TEST(table.due(t + 20min));	// a miss, and the period has passed
	// A failed reading keeps the table, and is tried again within a minute.
	table.take(parse_node_addrs("unavailable nodes down\n"), t + 20min);
	BOOST_TEST(*table.address_of("n1") == "10.0.0.1");
	BOOST_TEST(!table.due(t + 20min + 59s));
	BOOST_TEST(table.due(t + 21min));
	table.take(parse_node_addrs("addr n2 10.0.0.2\n"), t + 21min);
	BOOST_TEST(!table.address_of("n1"));	// a good reading replaces it whole
	BOOST_TEST(table.size() == 1u);
	table.mismatch();
	BOOST_TEST(!table.due(t + 30min));
	BOOST_TEST(table.due(t + 31min));
}

BOOST_AUTO_TEST_CASE(a_peer_is_its_nodes_address_or_not)
{
	BOOST_TEST(is_node_address("10.0.0.1", "10.0.0.1"));
	BOOST_TEST(is_node_address("10.0.0.1", "::ffff:10.0.0.1"));	// a v4 peer on a v6 socket
	BOOST_TEST(!is_node_address("10.0.0.1", "10.0.0.2"));
	BOOST_TEST(is_node_address("fd00::1", "fd00:0::1"));
	BOOST_TEST(is_node_address("localhost", "127.0.0.1"));	// a NodeAddr that is a name
	BOOST_TEST(!is_node_address("10.0.0.1", "not an address"));
	BOOST_TEST(!is_node_address("no-such-host.invalid", "10.0.0.1"));
}
