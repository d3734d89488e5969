// The request table (requests.def) and the one client of the daemon's
// socket, against a scripted daemon on a socket of the test's own: the
// frame checks each row implies, replies matched by seq from any thread,
// orders pushed between them, pipelined acknowledgements, the timeout that
// shuts a hung daemon's connection, the daemon's seq-0 reason and a
// second abandon() that does nothing.
#define BOOST_TEST_MODULE proto_client
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <future>
#include <set>
#include <thread>

#include "common/proto/client.hpp"
#include "common/proto/requests.hpp"

namespace fs = std::filesystem;
using gos::proto::Client;
using gos::proto::ProtocolError;

namespace {

gos_wire_hdr header(std::uint16_t type, std::uint32_t length)
{
	return {GOS_WIRE_MAGIC, GOS_WIRE_VERSION, type, 1, length};
}

// A daemon that serves one connection with a script, on a thread of its
// own: the script reads frames with next() and answers with reply()/push().
class ScriptedDaemon {
public:
	explicit ScriptedDaemon(std::function<void(ScriptedDaemon &)> script)
	{
		char tmpl[] = "/tmp/gos-proto-XXXXXX";
		BOOST_REQUIRE(::mkdtemp(tmpl));
		dir_ = tmpl;
		path = dir_ + "/d.sock";
		listener_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		sockaddr_un addr{};
		addr.sun_family = AF_UNIX;
		std::strcpy(addr.sun_path, path.c_str());
		BOOST_REQUIRE(::bind(listener_, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0);
		BOOST_REQUIRE(::listen(listener_, 4) == 0);
		server_ = std::thread([this, script] {
			fd_ = ::accept(listener_, nullptr, nullptr);
			if (fd_ >= 0)
				script(*this);
			if (fd_ >= 0)
				::close(fd_);
		});
	}
	~ScriptedDaemon()
	{
		::shutdown(listener_, SHUT_RDWR);
		server_.join();
		::close(listener_);
		fs::remove_all(dir_);
	}

	// The next request, or nothing once the client has gone.
	std::optional<gos::proto::Frame> next()
	{
		for (;;) {
			if (auto f = dec_.next())
				return f;
			std::uint8_t buf[4096];
			ssize_t got = ::read(fd_, buf, sizeof buf);
			if (got <= 0 || dec_.failed())
				return std::nullopt;
			dec_.feed(buf, static_cast<std::size_t>(got));
		}
	}
	template <class T>
	void reply(std::uint32_t seq, const T &body, int status = 0, std::string_view why = {})
	{
		write(gos::proto::encode_reply(seq, status, why, &body, sizeof body));
	}
	void reply(std::uint32_t seq, int status = 0, std::string_view why = {})
	{
		write(gos::proto::encode_reply(seq, status, why, nullptr, 0));
	}
	void push(const gos_wire_order &o) { write(gos::proto::encode(GOS_WIRE_ORDER, 0, o)); }
	void hang_up()
	{
		::close(fd_);
		fd_ = -1;
	}

	std::string path;

private:
	// On the daemon's thread: no Boost.Test here, it is not thread-safe; a
	// failed send leaves the client without its reply, which the test sees.
	void write(const gos::proto::Bytes &b) { (void)::send(fd_, b.data(), b.size(), MSG_NOSIGNAL); }

	std::string dir_;
	int listener_ = -1, fd_ = -1;
	gos::proto::Decoder dec_{gos::proto::Decoder::Accepts::requests};
	std::thread server_;
};

} // namespace

// Every row's payload bounds are what its header check enforces.
BOOST_AUTO_TEST_CASE(each_rows_bounds_are_its_frames_checks)
{
	auto table = gos::proto::request_table();
	BOOST_TEST(table.size() == std::size_t(GOS_REQ_MAX));
	for (const auto &row : table) {
		BOOST_TEST_INFO(row.name);
		BOOST_TEST(!gos::proto::check_header(header(row.type, std::uint32_t(row.request_min))));
		BOOST_TEST(!gos::proto::check_header(header(row.type, std::uint32_t(row.request_max))));
		BOOST_TEST(gos::proto::check_header(header(row.type, std::uint32_t(row.request_max + 1))).has_value());
		if (row.request_min)
			BOOST_TEST(gos::proto::check_header(header(row.type, std::uint32_t(row.request_min - 1))).has_value());
	}
	// The one request of records: a head and 1 .. GOS_RANK_REPORT_MAX whole records.
	const auto *ranks = gos::proto::request_row(GOS_REQ_RANK_REPORT);
	BOOST_REQUIRE(ranks);
	BOOST_TEST(ranks->request_max == sizeof(gos_req_rank_report) + GOS_RANK_REPORT_MAX * sizeof(gos_rank_record));
	auto why = gos::proto::check_header(header(GOS_REQ_RANK_REPORT, sizeof(gos_req_rank_report) + 10));
	BOOST_REQUIRE(why);
	BOOST_TEST(why->find("rank_report of") == 0u);
	BOOST_TEST(gos::proto::request_row(GOS_REQ_PLACEMENT)->reply_max == std::size_t(GOS_PLACEMENT_MAX));
	BOOST_TEST(gos::proto::caller_name(gos::proto::request_row(GOS_REQ_STEP_REGISTER)->caller) == "root");
	BOOST_TEST(!gos::proto::request_row(GOS_REQ_MAX + 1));
	BOOST_TEST(*gos::proto::check_header(header(GOS_REQ_MAX + 1, 0)) == "unknown message type " + std::to_string(GOS_REQ_MAX + 1));
}

// The agent's way: orders go to the reader's handler as they come, and
// replies, sent here in the reverse order, reach the threads that wait.
BOOST_AUTO_TEST_CASE(a_reader_hands_orders_on_and_matches_replies_from_any_thread)
{
	ScriptedDaemon d([](ScriptedDaemon &s) {
		auto a = s.next(), b = s.next();
		if (!a || !b)
			return;
		s.push(gos_wire_order{7, GOS_ORDER_EVICT, 0, 1, 0, 4096, 0, 0, 0, 0, -1, 0});
		for (const auto &f : {*b, *a}) {
			gos_req_meminfo req{};
			(void)gos::proto::decode(f, req);
			gos_rep_meminfo rep{};
			rep.allowed = 1000 + req.gpu;
			s.reply(f.hdr.seq, rep);
		}
		s.next();	// until the client goes
	});
	std::promise<std::uint64_t> order;
	std::atomic<int> lost = 0;
	{
		Client c(d.path, {Client::Path::as_given, 10000,
				  Client::Reader{[&](const gos_wire_order &o) { order.set_value(o.id); }, [&] { lost++; }}});
		auto other = std::async(std::launch::async, [&] { return c.meminfo(gos_req_meminfo{1, 0}); });
		auto mine = c.meminfo(gos_req_meminfo{0, 0});
		BOOST_TEST(mine.status == 0);
		BOOST_TEST(mine.value.allowed == 1000u);
		BOOST_TEST(other.get().value.allowed == 1001u);
		BOOST_TEST(order.get_future().get() == 7u);
	}
	BOOST_TEST(lost == 1);	// once, as the client closed
}

// Acknowledgements are all sent before any reply is awaited: this daemon
// answers only once it holds the three, as the agent's batches need.
BOOST_AUTO_TEST_CASE(pipelined_requests_are_all_sent_before_the_first_reply)
{
	ScriptedDaemon d([](ScriptedDaemon &s) {
		std::vector<std::uint32_t> seqs;
		while (seqs.size() < 3)
			if (auto f = s.next())
				seqs.push_back(f->hdr.seq);
			else
				return;
		for (std::uint32_t seq : seqs)
			s.reply(seq, seq == seqs[1] ? -ENOENT : 0, seq == seqs[1] ? "no such order" : "");
		s.next();
	});
	Client c(d.path, {Client::Path::as_given, 5000, Client::Reader{[](const gos_wire_order &) {}, [] {}}});
	std::vector<std::uint32_t> seqs;
	for (std::uint64_t id = 1; id <= 3; id++) {
		gos_req_order_done ack{id, 1, 0, 0};
		seqs.push_back(c.send(GOS_REQ_ORDER_DONE, &ack, sizeof ack));
	}
	BOOST_TEST(c.await(seqs[0]).status == 0);
	auto second = c.await(seqs[1]);
	BOOST_TEST(second.status == -ENOENT);
	BOOST_TEST(second.error == "no such order");
	BOOST_TEST(c.await(seqs[2]).status == 0);
}

// A daemon that never answers: the call gives up at its timeout and shuts
// the connection, so that no later call blocks on it either.
BOOST_AUTO_TEST_CASE(a_hung_daemons_connection_is_shut_at_the_timeout)
{
	for (bool reader : {false, true}) {
		BOOST_TEST_CONTEXT("with a reader: " << reader)
		{
			ScriptedDaemon d([](ScriptedDaemon &s) {
				while (s.next())
					;
			});
			std::atomic<int> lost = 0;
			Client::Options o{Client::Path::as_given, 200, std::nullopt};
			if (reader)
				o.reader = Client::Reader{[](const gos_wire_order &) {}, [&] { lost++; }};
			Client c(d.path, o);
			auto start = std::chrono::steady_clock::now();
			try {
				c.status();
				BOOST_FAIL("a silent daemon answered");
			} catch (const ProtocolError &e) {
				BOOST_TEST(std::string(e.what()) == "gpuoversubd did not answer within 200 ms");
				BOOST_TEST(e.code() == ENOTCONN);
			}
			BOOST_TEST((std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(200)));
			BOOST_CHECK_THROW(c.jobs(), ProtocolError);
			if (reader) {	// the reader saw the close: lost() ran, once
				for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
				     !lost && std::chrono::steady_clock::now() < until;)
					std::this_thread::yield();
				BOOST_TEST(lost == 1);
			}
		}
	}
}

// The daemon's reason for closing, a reply of seq 0, is what the caller
// reads, with or without a reader; a fixed reply of the wrong size is EPROTO.
BOOST_AUTO_TEST_CASE(the_daemons_reason_for_closing_reaches_the_caller)
{
	for (bool reader : {false, true}) {
		BOOST_TEST_CONTEXT("with a reader: " << reader)
		{
			ScriptedDaemon d([](ScriptedDaemon &s) {
				auto f = s.next();
				if (!f)
					return;
				s.reply(f->hdr.seq, std::uint32_t(5));	// an alloc's reply is no 4 bytes
				if (!s.next())
					return;
				s.reply(0, -EPROTO, "protocol version 2, this side speaks 3");
				s.hang_up();
			});
			Client::Options o{Client::Path::as_given, 10000, std::nullopt};
			if (reader)
				o.reader = Client::Reader{[](const gos_wire_order &) {}, [] {}};
			Client c(d.path, o);
			try {
				c.alloc(gos_req_alloc{0, 8, 0, 0, 4096});
				BOOST_FAIL("a short reply was taken");
			} catch (const ProtocolError &e) {
				BOOST_TEST(e.code() == EPROTO);
			}
			try {
				c.status();
				BOOST_FAIL("a closed connection answered");
			} catch (const ProtocolError &e) {
				BOOST_TEST(std::string(e.what()) ==
					   "gpuoversubd closed the connection: protocol version 2, this side speaks 3");
			}
		}
	}
}

// A reply to a request nobody awaits (post) is dropped, not mistaken for
// the next call's.
BOOST_AUTO_TEST_CASE(a_posted_requests_reply_is_dropped)
{
	ScriptedDaemon d([](ScriptedDaemon &s) {
		while (auto f = s.next()) {
			gos_rep_meminfo rep{};
			rep.allowed = f->hdr.type;
			s.reply(f->hdr.seq, rep);
		}
	});
	Client c(d.path);
	gos_req_activity act{0, 1};
	c.post(GOS_REQ_ACTIVITY, &act, sizeof act);
	auto rep = c.meminfo(gos_req_meminfo{0, 0});
	BOOST_TEST(rep.value.allowed == std::uint64_t(GOS_REQ_MEMINFO));
}

// Abandoning twice closes nothing the second time: not a descriptor that
// took the old one's number since, and not -1 (errno is left alone).
BOOST_AUTO_TEST_CASE(abandoning_twice_is_harmless)
{
	ScriptedDaemon d([](ScriptedDaemon &s) {
		while (s.next()) {
		}
	});
	Client c(d.path);
	int old = c.fd();
	c.abandon();
	BOOST_TEST(c.fd() == -1);
	int fds[2];
	BOOST_REQUIRE(::pipe(fds) == 0);	// likely takes the old number
	BOOST_TEST_MESSAGE("old descriptor " << old << ", pipe " << fds[0] << "," << fds[1]);
	errno = 0;
	c.abandon();
	BOOST_TEST(errno == 0);
	BOOST_TEST(::fcntl(fds[0], F_GETFD) != -1);
	BOOST_TEST(::fcntl(fds[1], F_GETFD) != -1);
	::close(fds[0]);
	::close(fds[1]);
}
