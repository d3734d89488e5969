// The job-wide channel over real TCP on the loopback: a writer's door
// (jobwide_listener) and a node's sender (jobwide_sender) in one event
// loop. munged's verdict is given (the real munged: munge.bats); what is
// checked is the door as a peer meets it: a part taken once, then dup; a
// frame refused on its header alone; a frame that does not come whole in
// time cut off without an answer; a job not known yet answered busy; a
// node outside the job refused; one address's connections capped.
#define BOOST_TEST_MODULE jobwide_channel
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <thread>

#include "common/jobwide/frame.hpp"
#include "daemon/gpud/jobwide_listener.hpp"
#include "daemon/gpud/jobwide_sender.hpp"

using namespace gos;
using namespace gos::gpud;
using namespace std::chrono_literals;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

struct Channel {
	std::filesystem::path dir;
	asio::io_context io;
	asio::thread_pool workers{1};
	JobwideWriter writer;
	NodeTable nodes{std::chrono::steady_clock::now(), 0s, 10min};
	munge::Decoded verdict;	// what "munged" says of every credential
	std::chrono::milliseconds unseal_takes{0};	// and how long it takes to say it
	DoorCounts counts;
	std::unique_ptr<JobwideListener> door;	// on the heap: ASan sees a connection that outlives it

	Channel() : dir(make_dir()), writer({.state_dir = dir.string()}, [](const std::string &) {})
	{
		report::RunFacts f;
		f.job = 42;
		f.start = 1733140000;
		f.writer = "n1";
		BOOST_TEST_REQUIRE(!writer.expect(f, "n[1-3]", 0));
		nodes.take(parse_node_addrs("addr n1 127.0.0.1\naddr n2 127.0.0.1\naddr n3 127.0.0.9\n"),
			   std::chrono::steady_clock::now());
		verdict.status = munge::Decoded::Status::ok;
		verdict.uid = 0;
		verdict.payload = sealed(42, "n2");
		ListenerSettings s;
		s.address = "127.0.0.1";
		s.port = 0;
		s.frame_within = 300ms;
		s.limits.per_address = 2;
		door = std::make_unique<JobwideListener>(io, workers, s, writer, nodes, is_node_address,
							 [this](const std::string &) {
								 std::this_thread::sleep_for(unseal_takes);
								 return verdict;
							 },
							 nullptr, counts);
	}
	~Channel()
	{
		door.reset();
		workers.join();
		std::filesystem::remove_all(dir);
	}
	static std::filesystem::path make_dir()
	{
		char tmpl[] = "/tmp/gos-channel-XXXXXX";
		return ::mkdtemp(tmpl);
	}
	static std::string sealed(std::uint32_t job, const std::string &node, std::int64_t start = 1733140000)
	{
		std::string text;
		jobwide::Payload p{job, 0, start, node, {"n1", "n2"}, R"({"node":")" + node + R"(","evicted":5})"};
		BOOST_TEST_REQUIRE(!jobwide::encode_payload(p, text));
		return text;
	}
	static std::string frame(std::uint32_t job, const std::string &node)
	{
		jobwide::Bytes b;
		BOOST_TEST_REQUIRE(!jobwide::encode_frame({jobwide::Kind::part, node, job, "MUNGE:stand-in:"}, b));
		return std::string(b.begin(), b.end());
	}
	// What a sender hears for FRAME, the loop run until it has.
	std::pair<Heard, std::string> send(const std::string &bytes)
	{
		std::optional<std::pair<Heard, std::string>> got;
		send_frame(io, {"127.0.0.1", door->port(), "127.0.0.1", 5000ms}, bytes,
			   [&](Heard h, const std::string &why) { got.emplace(h, why); });
		run_until([&] { return got.has_value(); });
		return *got;
	}
	template <class Cond>
	void run_until(Cond cond)
	{
		for (auto until = std::chrono::steady_clock::now() + 10s; !cond();) {
			BOOST_TEST_REQUIRE((std::chrono::steady_clock::now() < until));
			io.run_for(10ms);
			io.restart();
		}
	}
	// A raw connection, for what no sender of ours would send.
	std::string raw(const std::string &bytes, bool wait_for_close = true)
	{
		tcp::socket s(io);
		s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), door->port()));
		asio::write(s, asio::buffer(bytes));
		std::string line;
		bool closed = false;
		asio::async_read(s, asio::dynamic_buffer(line), [&](const boost::system::error_code &, std::size_t) { closed = true; });
		if (wait_for_close)
			run_until([&] { return closed; });
		return line;
	}
};

} // namespace

BOOST_AUTO_TEST_CASE(a_part_is_taken_once_then_dup)
{
	Channel c;
	auto [heard, why] = c.send(Channel::frame(42, "n2"));
	BOOST_TEST((heard == Heard::taken));
	BOOST_TEST(c.door->taken() == 1u);
	BOOST_TEST(!c.writer.file_of(42, 1733140000));	// still open: n1 and n3 to come
	// The same frame again, its credential a replay in munged's eyes: dup.
	c.verdict.status = munge::Decoded::Status::replayed;
	std::tie(heard, why) = c.send(Channel::frame(42, "n2"));
	BOOST_TEST((heard == Heard::taken));
	BOOST_TEST(c.door->taken() == 1u);
}

// A part answered busy after munged has seen its credential (a run of a
// known job not expected yet: a requeue) is kept when its sender tries
// again with the same frame, which munged then calls a replay.
BOOST_AUTO_TEST_CASE(a_part_answered_busy_is_taken_when_it_comes_again)
{
	Channel c;
	const std::int64_t next_run = 1733150000;
	c.verdict.payload = Channel::sealed(42, "n2", next_run);
	auto [heard, why] = c.send(Channel::frame(42, "n2"));
	BOOST_TEST((heard == Heard::busy));
	report::RunFacts f;
	f.job = 42;
	f.run = 1;
	f.start = next_run;
	f.writer = "n1";
	BOOST_TEST_REQUIRE(!c.writer.expect(f, "n[1-3]", 0));
	c.verdict.status = munge::Decoded::Status::replayed;
	std::tie(heard, why) = c.send(Channel::frame(42, "n2"));
	BOOST_TEST((heard == Heard::taken));
	BOOST_TEST(c.door->taken() == 1u);
	std::vector<ClosedRun> closed = c.writer.due(1000);
	BOOST_TEST_REQUIRE(closed.size() == 2u);
	BOOST_TEST(closed[1].facts.start == next_run);
	BOOST_TEST(closed[1].record.parts == 1u);
}

// The listener goes (the daemon stops) with a connection mid-frame and
// another's credential on a worker: nothing of it is touched after.
BOOST_AUTO_TEST_CASE(the_listener_goes_with_connections_and_a_worker_in_flight)
{
	Channel c;
	c.unseal_takes = 300ms;
	tcp::socket half(c.io);
	half.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), c.door->port()));
	asio::write(half, asio::buffer(Channel::frame(42, "n2").substr(0, 10)));
	std::optional<Heard> heard;
	send_frame(c.io, {"127.0.0.1", c.door->port(), "127.0.0.1", 5000ms}, Channel::frame(42, "n2"),
		   [&](Heard h, const std::string &) { heard = h; });
	c.io.run_for(100ms);	// the second frame is on the worker now
	c.io.restart();
	c.door.reset();
	c.run_until([&] { return heard.has_value(); });
	BOOST_TEST((*heard == Heard::busy));	// no answer: tried again later
	c.io.run_for(400ms);	// the worker's result comes back to nothing
	BOOST_TEST(!c.writer.file_of(42, 1733140000));
}

BOOST_AUTO_TEST_CASE(refusals_reach_the_sender_and_are_counted)
{
	Channel c;
	auto [heard, why] = c.send(Channel::frame(42, "n9"));
	BOOST_TEST((heard == Heard::refused));
	BOOST_TEST(why == "not_member");
	std::tie(heard, why) = c.send(Channel::frame(42, "n3"));	// n3's address is not 127.0.0.1
	BOOST_TEST((heard == Heard::busy));	// the table may be stale: read again, tried again
	BOOST_TEST(c.door->refused().at("busy_not_its_address") == 1u);
	c.verdict.uid = 65534;
	std::tie(heard, why) = c.send(Channel::frame(42, "n2"));
	BOOST_TEST(why == "not_root");
	c.verdict.uid = 0;
	c.verdict.payload = Channel::sealed(42, "n1");	// n1's sealed part in n2's frame
	std::tie(heard, why) = c.send(Channel::frame(42, "n2"));
	BOOST_TEST(why == "not_its_frame");
	std::tie(heard, why) = c.send(Channel::frame(43, "n2"));
	BOOST_TEST((heard == Heard::busy));	// job 43 is not known here yet
	BOOST_TEST(c.door->refused().at("not_member") == 1u);
	BOOST_TEST(c.door->refused().at("not_root") == 1u);
	BOOST_TEST(c.door->refused().at("busy_unknown_job") == 1u);
	BOOST_TEST(c.door->taken() == 0u);
}

BOOST_AUTO_TEST_CASE(a_frame_is_refused_on_its_header_and_cut_off_when_slow)
{
	Channel c;
	std::string big = Channel::frame(42, "n2");
	big[12] = '\xff';	// a credential length of far more than 12 KiB
	big[13] = '\xff';
	BOOST_TEST(c.raw(big.substr(0, jobwide::frame_header_size)) == "refused oversize\n");
	BOOST_TEST(c.raw("GOSX" + std::string(12, '\0')) == "refused bad_magic\n");
	// Half a frame, then nothing: closed after frame_within, no answer.
	std::string half = Channel::frame(42, "n2");
	auto t = std::chrono::steady_clock::now();
	BOOST_TEST(c.raw(half.substr(0, half.size() / 2)) == "");
	BOOST_TEST((std::chrono::steady_clock::now() - t >= 250ms));
	BOOST_TEST(c.door->taken() == 0u);
}

BOOST_AUTO_TEST_CASE(one_addresss_connections_are_capped)
{
	Channel c;
	// Two connections held open with half a frame each: the cap is 2.
	tcp::socket a(c.io), b(c.io);
	for (tcp::socket *s : {&a, &b}) {
		s->connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), c.door->port()));
		asio::write(*s, asio::buffer(std::string(4, 'G')));
	}
	c.io.run_for(50ms);
	c.io.restart();
	auto [heard, why] = c.send(Channel::frame(42, "n2"));
	BOOST_TEST((heard == Heard::busy));
	BOOST_TEST(c.door->refused().at("busy_address_full") == 1u);
	// Once they are cut off, the address may send again.
	c.run_until([&] { return c.send(Channel::frame(42, "n2")).first == Heard::taken; });
}
