// The job-wide channel over real TCP on the loopback: a writer's door
// (jobwide_listener) and a node's sender (jobwide_sender) in one event
// loop. munged is a stand-in that seals answers and gives a set verdict on
// parts (the real munged: munge.bats); what is checked is the door as a
// peer meets it: a part taken once, then dup; a frame refused on its header
// alone; a frame that does not come whole in time cut off without an
// answer; a job not known yet answered busy; a node outside the job
// refused; one address's connections capped; a peer from an unreserved
// port refused at once; and, from the sender's side, no answer believed
// that the writer's daemon did not seal for this part.
#define BOOST_TEST_MODULE jobwide_channel
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include <unistd.h>

#include "common/jobwide/frame.hpp"
#include "daemon/gpud/jobwide_listener.hpp"
#include "daemon/gpud/jobwide_sender.hpp"

using namespace gos;
using namespace gos::gpud;
using namespace std::chrono_literals;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

// A port below 1024 on 127.0.0.1 for S (the tests run as root, as CI does;
// as another user, false).
bool bind_reserved(tcp::socket &s)
{
	s.open(tcp::v4());
	for (unsigned short port = 600; port < 1024; port++) {
		boost::system::error_code ec;
		s.bind(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), ec);
		if (!ec)
			return true;
	}
	return false;
}

// munged as the channel sees it: answers sealed by UID into stand-in
// credentials, which open as sealed; any other credential (a part) opens as
// VERDICT says.
struct StandInMunged {
	std::mutex mu;
	std::map<std::string, munge::Decoded> sealed;
	uid_t uid = 0;	// who seals answers: the writer's daemon
	munge::Decoded verdict;
	std::chrono::milliseconds takes{0};	// how long opening a part takes

	Munged calls()
	{
		return {[this](const std::string &credential) {
				std::this_thread::sleep_for(takes);
				std::lock_guard lock(mu);
				auto it = sealed.find(credential);
				return it != sealed.end() ? it->second : verdict;
			},
			[this](const std::string &payload, std::string &credential) -> std::optional<std::string> {
				std::lock_guard lock(mu);
				credential = "MUNGE:answer" + std::to_string(sealed.size()) + ":";
				munge::Decoded d;
				d.status = munge::Decoded::Status::ok;
				d.uid = uid;
				d.payload = payload;
				sealed[credential] = d;
				return std::nullopt;
			}};
	}
};

struct Channel {
	std::filesystem::path dir;
	asio::io_context io;
	asio::thread_pool workers{1};
	JobwideWriter writer;
	NodeTable nodes{std::chrono::steady_clock::now(), 0s, 10min};
	StandInMunged munged;
	munge::Decoded &verdict = munged.verdict;	// what "munged" says of every part
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
		Munged m = munged.calls();
		door = std::make_unique<JobwideListener>(io, workers, s, writer, nodes, is_node_address, m.unseal,
							 m.seal, nullptr, counts);
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
	// What a sender believes: a seal by root (the writer's daemon here),
	// for NODE's part of job 42's first run.
	Believe believe(const std::string &node = "n2", std::uint32_t job = 42, std::int64_t start = 1733140000)
	{
		return {&workers, munged.calls().unseal, {0}, {job, start, node}};
	}
	// What a sender hears for FRAME at PORT (the door's), the loop run
	// until it has.
	std::pair<Heard, std::string> send(const std::string &bytes, std::optional<Believe> b = std::nullopt,
					   std::uint16_t port = 0)
	{
		std::optional<std::pair<Heard, std::string>> got;
		send_frame(io, {"127.0.0.1", port ? port : door->port(), "127.0.0.1", 5000ms}, bytes,
			   b ? *b : believe(), [&](Heard h, const std::string &why) { got.emplace(h, why); });
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
	// A connection to the door from a reserved port, for what no sender
	// of ours would send.
	tcp::socket connect_reserved()
	{
		tcp::socket s(io);
		BOOST_TEST_REQUIRE(bind_reserved(s), "the channel tests run as root");
		s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), door->port()));
		return s;
	}
	std::string raw(const std::string &bytes, bool wait_for_close = true)
	{
		tcp::socket s = connect_reserved();
		asio::write(s, asio::buffer(bytes));
		std::string line;
		bool closed = false;
		asio::async_read(s, asio::dynamic_buffer(line), [&](const boost::system::error_code &, std::size_t) { closed = true; });
		if (wait_for_close)
			run_until([&] { return closed; });
		return line;
	}
};

// One who holds a port in a writer's place (issue 50, finding 1): it
// answers each connection's frame with LINE.
struct Squatter {
	tcp::acceptor acceptor;
	std::string line;
	std::vector<std::shared_ptr<tcp::socket>> peers;

	Squatter(asio::io_context &io, std::string answer)
		: acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)), line(std::move(answer))
	{
		accept();
	}
	void accept()
	{
		acceptor.async_accept([this](const boost::system::error_code &ec, tcp::socket sock) {
			if (ec)
				return;
			auto s = std::make_shared<tcp::socket>(std::move(sock));
			peers.push_back(s);
			asio::async_write(*s, asio::buffer(line), [](const boost::system::error_code &, std::size_t) {});
			accept();
		});
	}
	std::uint16_t port() const { return acceptor.local_endpoint().port(); }
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
	std::tie(heard, why) = c.send(Channel::frame(42, "n2"), c.believe("n2", 42, next_run));
	BOOST_TEST((heard == Heard::taken), why);
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
	c.munged.takes = 300ms;
	tcp::socket half = c.connect_reserved();
	asio::write(half, asio::buffer(Channel::frame(42, "n2").substr(0, 10)));
	std::optional<Heard> heard;
	send_frame(c.io, {"127.0.0.1", c.door->port(), "127.0.0.1", 5000ms}, Channel::frame(42, "n2"), c.believe(),
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
	// Refused before munged opened it: not sealed, so not believed (a
	// squatter could say as much); tried again, and counted by the door.
	auto [heard, why] = c.send(Channel::frame(42, "n9"), c.believe("n9"));
	BOOST_TEST((heard == Heard::busy));
	BOOST_TEST(why == "refused not_member, unsealed: not believed, tried again");
	std::tie(heard, why) = c.send(Channel::frame(42, "n3"));	// n3's address is not 127.0.0.1
	BOOST_TEST((heard == Heard::busy));	// the table may be stale: read again, tried again
	BOOST_TEST(c.door->refused().at("busy_not_its_address") == 1u);
	c.verdict.uid = 65534;
	std::tie(heard, why) = c.send(Channel::frame(42, "n2"));
	BOOST_TEST(why == "refused not_root, unsealed: not believed, tried again");
	c.verdict.uid = 0;
	c.verdict.payload = Channel::sealed(42, "n1");	// n1's sealed part in n2's frame
	// Opened, then refused: sealed, and believed.
	std::tie(heard, why) = c.send(Channel::frame(42, "n2"), c.believe("n1"));
	BOOST_TEST((heard == Heard::refused));
	BOOST_TEST(why == "not_its_frame");
	std::tie(heard, why) = c.send(Channel::frame(43, "n2"), c.believe("n2", 43));
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
	tcp::socket a = c.connect_reserved(), b = c.connect_reserved();
	for (tcp::socket *s : {&a, &b})
		asio::write(*s, asio::buffer(std::string(4, 'G')));
	c.io.run_for(50ms);
	c.io.restart();
	auto [heard, why] = c.send(Channel::frame(42, "n2"));
	BOOST_TEST((heard == Heard::busy));
	BOOST_TEST(c.door->refused().at("busy_address_full") == 1u);
	// Once they are cut off, the address may send again.
	c.run_until([&] { return c.send(Channel::frame(42, "n2")).first == Heard::taken; });
}

// Issue 50, findings 1 and 2: whoever holds the writer's port answers; the
// sender believes none of it but the writer's daemon's seal for this part.
BOOST_AUTO_TEST_CASE(a_squatters_answers_are_not_believed)
{
	Channel c;
	for (std::string line : {"ok\n", "dup\n", "refused not_member\n"}) {
		Squatter q(c.io, line);
		auto [heard, why] = c.send(Channel::frame(42, "n2"), std::nullopt, q.port());
		BOOST_TEST((heard == Heard::busy), line);
		BOOST_TEST(why.find("unsealed") != std::string::npos, why);
	}
	// A seal by another user (munged says who sealed it).
	c.munged.uid = 1000;
	std::string credential;
	BOOST_TEST_REQUIRE(!c.munged.calls().seal(R"({"answer":"ok","job":42,"start":1733140000,"node":"n2"})",
						   credential));
	Squatter by_user(c.io, "sealed " + credential + "\n");
	auto [heard, why] = c.send(Channel::frame(42, "n2"), std::nullopt, by_user.port());
	BOOST_TEST((heard == Heard::busy));
	BOOST_TEST(why.find("an answer sealed by uid 1000") == 0u, why);
	// The writer's real seal, for another node's part, passed off as this one's.
	c.munged.uid = 0;
	BOOST_TEST_REQUIRE(!c.munged.calls().seal(R"({"answer":"ok","job":42,"start":1733140000,"node":"n3"})",
						   credential));
	Squatter other_part(c.io, "sealed " + credential + "\n");
	std::tie(heard, why) = c.send(Channel::frame(42, "n2"), std::nullopt, other_part.port());
	BOOST_TEST((heard == Heard::busy));
	BOOST_TEST(why == "a sealed answer that is not this part's (not_this_part)");
	// munged refuses to open it (a replay, a forgery).
	Squatter forged(c.io, "sealed MUNGE:forged:\n");
	c.verdict.status = munge::Decoded::Status::invalid;
	std::tie(heard, why) = c.send(Channel::frame(42, "n2"), std::nullopt, forged.port());
	BOOST_TEST((heard == Heard::busy));
	BOOST_TEST(why.find("an answer munged does not open (invalid") == 0u, why);
	// The door itself: its seal is believed.
	c.verdict.status = munge::Decoded::Status::ok;
	std::tie(heard, why) = c.send(Channel::frame(42, "n2"));
	BOOST_TEST((heard == Heard::taken), why);
}

// Issue 50, findings 3 and 4: a peer from a port above 1023 (any user) is
// closed at once and costs the door's limits nothing; root's part, from a
// reserved port of the same address, still passes.
BOOST_AUTO_TEST_CASE(a_peer_from_an_unreserved_port_is_refused_and_spends_no_limit)
{
	Channel c;
	std::vector<std::unique_ptr<tcp::socket>> held;
	for (int i = 0; i < 8; i++) {	// 4 times the address's cap
		held.push_back(std::make_unique<tcp::socket>(c.io));
		held.back()->connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), c.door->port()));
	}
	std::string line;
	bool closed = false;
	asio::async_read(*held.back(), asio::dynamic_buffer(line),
			 [&](const boost::system::error_code &, std::size_t) { closed = true; });
	c.run_until([&] { return closed; });
	BOOST_TEST(line == "");	// closed unread and unanswered
	auto [heard, why] = c.send(Channel::frame(42, "n2"));
	BOOST_TEST((heard == Heard::taken), why);
	BOOST_TEST(c.door->refused().at("unreserved_port") == 8u);
	BOOST_TEST(!c.door->refused().contains("busy_address_full"));
}
