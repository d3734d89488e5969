// The job-wide door's checks: what one address may cost (connections and
// frames); Slurm's node table that a sender's address is checked against
// (its parsing, when it is read again, the address match); and each
// refusal of checks 2 to 5, with munged's verdicts given (the real munged
// is tests/integration/slurm/munge.bats').
#define BOOST_TEST_MODULE jobwide_door
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>

#include <filesystem>

#include "daemon/gpud/door_limits.hpp"
#include "daemon/gpud/jobwide_door.hpp"
#include "daemon/gpud/node_table.hpp"
#include "daemon/gpud/port_holder.hpp"

using namespace gos::gpud;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

BOOST_AUTO_TEST_CASE(connections_are_bounded_in_all_and_per_address)
{
	DoorLimits door({.connections = 6, .per_address = 4});
	auto t = Clock::now();
	for (int i = 0; i < 4; i++)
		BOOST_TEST(name_of(door.connect("10.0.0.1", t)) == "ok");
	BOOST_TEST(name_of(door.connect("10.0.0.1", t)) == "address_full");
	BOOST_TEST(name_of(door.connect("10.0.0.2", t)) == "ok");
	BOOST_TEST(name_of(door.connect("10.0.0.3", t)) == "ok");
	BOOST_TEST(name_of(door.connect("10.0.0.4", t)) == "door_full");
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
	BOOST_TEST(name_of(door.connect("10.0.2.1", t + 1s)) == "door_full");
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
	// --node-state, for a successor: down, up, or why slurmctld did not say.
	BOOST_TEST(*parse_node_state("state n1 down\n", "n1").down);
	BOOST_TEST(!*parse_node_state("state n1 up\n", "n1").down);
	BOOST_TEST(!parse_node_state("state n2 down\n", "n1").down);	// another node's
	BOOST_TEST(!parse_node_state("state n1 sideways\n", "n1").down);
	NodeState unknown = parse_node_state("unavailable node slurmctld: Unable to contact slurm controller\n", "n1");
	BOOST_TEST(!unknown.down);
	BOOST_TEST(unknown.unavailable == "slurmctld: Unable to contact slurm controller");
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

BOOST_AUTO_TEST_CASE(a_miss_before_the_first_reading_asks_for_it_at_once)
{
	auto t = Clock::now();
	NodeTable table(t, 50s, 10min);
	BOOST_TEST(!table.due(Clock::now()));
	BOOST_TEST(!table.address_of("n1"));	// a part came for n1
	BOOST_TEST(table.due(Clock::now()));
	// Slurm could not be asked: again within a minute, not at each miss.
	table.take(parse_node_addrs("unavailable nodes down\n"), Clock::now());
	BOOST_TEST(!table.address_of("n1"));
	BOOST_TEST(!table.due(Clock::now()));
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

namespace {

struct Door {
	std::filesystem::path dir;
	JobwideWriter writer;
	NodeTable nodes{Clock::now(), 0s, 10min};
	Door() : dir(make_dir()), writer({.state_dir = dir.string()}, [](const std::string &) {})
	{
		gos::report::RunFacts f;
		f.job = 42;
		f.run = 0;
		f.start = 1733140000;
		f.writer = "n1";
		BOOST_TEST_REQUIRE(!writer.expect(f, "n[1-3]", 0));
		nodes.take(parse_node_addrs("addr n1 10.0.0.1\naddr n2 10.0.0.2\n"), Clock::now());
	}
	~Door() { std::filesystem::remove_all(dir); }
	static std::filesystem::path make_dir()
	{
		char tmpl[] = "/tmp/gos-door-XXXXXX";
		return ::mkdtemp(tmpl);
	}
};

gos::jobwide::Frame frame(std::uint32_t job, std::string node)
{
	return {gos::jobwide::Kind::part, std::move(node), job, "MUNGE:cred:"};
}

gos::jobwide::Payload payload(std::uint32_t job, const std::string &node, std::string part = "")
{
	if (part.empty())
		part = R"({"node":")" + node + R"(","run":0,"evicted":3})";
	return {job, 0, 1733140000, node, {"n1", "n2"}, part};
}

// munged's verdict on any credential: STATUS, made by UID, sealing P.
Unseal sealed(gos::munge::Decoded::Status status, uid_t uid, const gos::jobwide::Payload &p)
{
	std::string text;
	BOOST_TEST_REQUIRE(!gos::jobwide::encode_payload(p, text));
	return [=](const std::string &) {
		gos::munge::Decoded d;
		d.status = status;
		d.uid = uid;
		d.payload = text;
		return d;
	};
}

bool same(const std::string &a, const std::string &b) { return a == b; }

} // namespace

BOOST_AUTO_TEST_CASE(admission_wants_a_known_job_a_member_node_and_its_address)
{
	Door d;
	Admission a = admit_frame(d.writer, d.nodes, frame(42, "n2"));
	BOOST_TEST((a.is == Admission::Is::pass));
	BOOST_TEST(a.node_addr == "10.0.0.2");
	a = admit_frame(d.writer, d.nodes, frame(43, "n2"));
	BOOST_TEST((a.is == Admission::Is::busy));	// not yet known: tried again
	BOOST_TEST(a.reason == "unknown_job");
	a = admit_frame(d.writer, d.nodes, frame(42, "n9"));
	BOOST_TEST((a.is == Admission::Is::refused));
	BOOST_TEST(a.reason == "not_member");
	a = admit_frame(d.writer, d.nodes, frame(42, "n3"));	// in the run, not in Slurm's table yet
	BOOST_TEST((a.is == Admission::Is::busy));
	BOOST_TEST(a.reason == "unknown_node");
}

BOOST_AUTO_TEST_CASE(opening_checks_the_address_before_munge_then_munges_verdict_and_uid)
{
	using S = gos::munge::Decoded::Status;
	const auto f = frame(42, "n2");
	bool unsealed = false;
	Unseal counting = [&](const std::string &) {
		unsealed = true;
		return gos::munge::Decoded{};
	};
	// Root on another node claiming n2: refused before munged spends the credential.
	Opened moved = open_frame(f, "10.0.0.2", "10.0.0.3", same, counting);
	BOOST_TEST(moved.refused == "not_its_address");
	BOOST_TEST(moved.again);	// the table may be stale: tried again
	BOOST_TEST(!unsealed);
	BOOST_TEST(open_frame(f, "10.0.0.2", "10.0.0.2", same, sealed(S::ok, 65534, payload(42, "n2"))).refused == "not_root");
	BOOST_TEST(open_frame(f, "10.0.0.2", "10.0.0.2", same, sealed(S::expired, 0, payload(42, "n2"))).refused == "expired");
	// A replay opens: the run decides (dup once it holds the part).
	BOOST_TEST(open_frame(f, "10.0.0.2", "10.0.0.2", same, sealed(S::replayed, 0, payload(42, "n2"))).refused.empty());
	BOOST_TEST(open_frame(f, "10.0.0.2", "10.0.0.2", same, sealed(S::replayed, 65534, payload(42, "n2"))).refused ==
		   "not_root");
	BOOST_TEST(open_frame(f, "10.0.0.2", "10.0.0.2", same, sealed(S::invalid, 0, payload(42, "n2"))).refused == "invalid");
	Opened down = open_frame(f, "10.0.0.2", "10.0.0.2", same, sealed(S::other, 0, payload(42, "n2")));
	BOOST_TEST(down.refused == "munge_unavailable");
	BOOST_TEST(down.again);
	BOOST_TEST(!open_frame(f, "10.0.0.2", "10.0.0.2", same, sealed(S::invalid, 0, payload(42, "n2"))).again);
	Opened o = open_frame(f, "10.0.0.2", "10.0.0.2", same, sealed(S::ok, 0, payload(42, "n2")));
	BOOST_TEST(o.refused.empty());
	BOOST_TEST(o.payload.node == "n2");
	Unseal garbage = [](const std::string &) {
		gos::munge::Decoded d;
		d.status = S::ok;
		d.uid = 0;
		d.payload = "{not json";
		return d;
	};
	BOOST_TEST(open_frame(f, "10.0.0.2", "10.0.0.2", same, garbage).refused == "bad_json");
}

BOOST_AUTO_TEST_CASE(taking_wants_the_payload_to_be_the_frames_and_the_run_to_take_it)
{
	Door d;
	bool late = false;
	auto word = [](const gos::jobwide::Answer &a) {
		return a.word == gos::jobwide::Answer::Word::refused ? "refused " + a.reason
		       : a.word == gos::jobwide::Answer::Word::ok    ? std::string("ok")
		       : a.word == gos::jobwide::Answer::Word::dup   ? std::string("dup")
								     : std::string("busy");
	};
	// A sealed part of n2 sent as n1's frame, or for another job.
	BOOST_TEST(word(take_frame(d.writer, frame(42, "n1"), payload(42, "n2"), late)) == "refused not_its_frame");
	BOOST_TEST(word(take_frame(d.writer, frame(42, "n2"), payload(41, "n2"), late)) == "refused not_its_frame");
	BOOST_TEST(word(take_frame(d.writer, frame(42, "n2"), payload(42, "n2", R"({"node":"n1"})"), late)) ==
		   "refused not_its_frame");
	BOOST_TEST(word(take_frame(d.writer, frame(42, "n2"), payload(42, "n2", "[1]"), late)) == "refused bad_part");
	BOOST_TEST(word(take_frame(d.writer, frame(42, "n2"), payload(42, "n2", R"({"node":"n2","evicted":"x"})"), late)) ==
		   "refused bad_part");
	BOOST_TEST(word(take_frame(d.writer, frame(42, "n2"), payload(42, "n2"), late)) == "ok");
	BOOST_TEST(!late);
	BOOST_TEST(word(take_frame(d.writer, frame(42, "n2"), payload(42, "n2"), late)) == "dup");
	auto other_run = payload(42, "n2");
	other_run.start += 100;
	BOOST_TEST(word(take_frame(d.writer, frame(42, "n2"), other_run, late)) == "busy");
	d.writer.due(1000);	// the wait is over
	BOOST_TEST(word(take_frame(d.writer, frame(42, "n1"), payload(42, "n1"), late)) == "ok");
	BOOST_TEST(late);
}

// Issue 50, finding 1: the log names who holds the door's port. Lines as
// /proc/net/tcp and tcp6 give them: a listener of uid 1001 on 6828 (1AAC),
// one of root on 22, a connection of uid 1002 from 6828, and a socket bound
// to 6828 but not listening, of uid 1003.
BOOST_AUTO_TEST_CASE(the_ports_holders_are_named)
{
	const std::string tcp =
		"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
		"   0: 00000000:1AAC 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1001        0 1 1 0000 100 0 0 10 0\n"
		"   1: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2 1 0000 100 0 0 10 0\n"
		"   2: 0100007F:1AAC 0100007F:9C40 01 00000000:00000000 00:00000000 00000000  1002        0 3 1 0000 100 0 0 10 0\n"
		"   3: 0100007F:1AAC 00000000:0000 07 00000000:00000000 00:00000000 00000000  1003        0 4 1 0000 100 0 0 10 0\n"
		"   4: garbage\n";
	BOOST_TEST(port_holders_in(tcp, 6828) == (std::vector<uid_t>{1001, 1003}), boost::test_tools::per_element());
	BOOST_TEST(port_holders_in(tcp, 22) == (std::vector<uid_t>{0}), boost::test_tools::per_element());
	const std::string tcp6 =
		"  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
		"   0: 00000000000000000000000000000000:1AAC 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1001        0 5 1 0000 100 0 0 10 0\n";
	BOOST_TEST(port_holders_in(tcp6, 6828) == (std::vector<uid_t>{1001}), boost::test_tools::per_element());
	BOOST_TEST(port_holders_in(tcp6, 6829).empty());
}
