#include "daemon/gpud/jobwide_sender.hpp"

#include <algorithm>
#include <memory>
#include <random>

#include "common/jobwide/frame.hpp"

namespace gos::gpud {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

// The reserved ports a sender leaves from, as bindresvport(3) draws them.
constexpr unsigned reserved_low = 512, reserved_end = 1024;

// Binds SOCK at FROM, to a free reserved port tried from a random one on
// when RESERVED, else to the kernel's choice of port; the last error when
// none could be bound (access_denied: the daemon is not root and lacks
// CAP_NET_BIND_SERVICE; address_not_available: FROM is not this host's).
// A failed bind leaves the socket as it was, to be bound again.
boost::system::error_code bind_source(tcp::socket &sock, const asio::ip::address &from, bool reserved)
{
	boost::system::error_code ec;
	if (!reserved) {
		sock.bind(tcp::endpoint(from, 0), ec);
		return ec;
	}
	thread_local std::minstd_rand draw{std::random_device{}()};
	const unsigned span = reserved_end - reserved_low, first = static_cast<unsigned>(draw() % span);
	// No SO_REUSEADDR: with it two tries at once could bind one port, and
	// the second's connect to the same writer would fail.
	for (unsigned i = 0; i < span; i++) {
		ec.clear();
		sock.bind(tcp::endpoint(from, static_cast<unsigned short>(reserved_low + (first + i) % span)), ec);
		if (ec != asio::error::address_in_use)
			return ec;
	}
	return ec;
}

class Try : public std::enable_shared_from_this<Try> {
public:
	Try(asio::io_context &io, SendTo to, std::string frame, Believe believe, Sent done)
		: resolver_(io), sock_(io), timer_(io), to_(std::move(to)), frame_(std::move(frame)),
		  believe_(std::move(believe)), done_(std::move(done))
	{
	}

	void start()
	{
		timer_.expires_after(to_.within);
		timer_.async_wait([self = shared_from_this()](const boost::system::error_code &ec) {
			if (!ec)
				self->finish(Heard::busy, "no answer in time");
		});
		resolver_.async_resolve(to_.host, std::to_string(to_.port),
					[self = shared_from_this()](const boost::system::error_code &ec,
								    const tcp::resolver::results_type &found) {
						if (ec)
							return self->finish(Heard::busy, "cannot look up " + self->to_.host + ": " + ec.message());
						self->connect(found);
					});
	}

private:
	void connect(const tcp::resolver::results_type &found)
	{
		if (found.empty())
			return finish(Heard::busy, "no address for " + to_.host);
		// From this node's own address when it is numeric, to a writer's
		// address of the same family; a source that cannot be bound
		// (a name, or no such address here) leaves the choice to the
		// kernel, and the writer's address check says whether it passes.
		boost::system::error_code ec;
		asio::ip::address from = to_.from.empty() ? asio::ip::address() : asio::ip::make_address(to_.from, ec);
		const bool bind = !to_.from.empty() && !ec;
		tcp::endpoint at = *found.begin();
		for (const auto &e : found)
			if (bind && e.endpoint().address().is_v4() == from.is_v4()) {
				at = e.endpoint();
				break;
			}
		ec.clear();
		sock_.open(at.protocol(), ec);
		if (ec)
			return finish(Heard::busy, "cannot open a socket: " + ec.message());
		asio::ip::address any = at.address().is_v4() ? asio::ip::address(asio::ip::address_v4::any())
							      : asio::ip::address(asio::ip::address_v6::any());
		asio::ip::address source = bind && from.is_v4() == at.address().is_v4() ? from : any;
		boost::system::error_code bound = bind_source(sock_, source, to_.reserved);
		if (bound == boost::system::errc::address_not_available && source != any)
			bound = bind_source(sock_, source = any, to_.reserved);
		if (bound && to_.reserved) {
			unreserved_ = bound == asio::error::access_denied
					      ? "this daemon may not bind a port below 1024 (give it CAP_NET_BIND_SERVICE)"
					      : "no port below 1024 is free here (" + bound.message() + ")";
			bind_source(sock_, source, false);
		}
		sock_.async_connect(at, [self = shared_from_this()](const boost::system::error_code &e) {
			if (e)
				return self->finish(Heard::busy, "cannot connect to " + self->to_.host + ": " + e.message());
			asio::async_write(self->sock_, asio::buffer(self->frame_),
					  [self](const boost::system::error_code &w, std::size_t) {
						  if (w)
							  return self->finish(Heard::busy, "cannot send: " + w.message());
						  self->read();
					  });
		});
	}

	void read()
	{
		asio::async_read_until(sock_, asio::dynamic_buffer(line_, jobwide::sealed_answer_max_bytes), '\n',
				       [self = shared_from_this()](const boost::system::error_code &ec, std::size_t n) {
					       if (ec)
						       return self->finish(Heard::busy, "no answer: " + ec.message());
					       self->line_.resize(n);
					       self->answered();
				       });
	}

	void answered()
	{
		auto credential = jobwide::sealed_credential(line_);
		if (!credential) {
			// The door's own limits and first checks answer unsealed:
			// never believed, as anyone on the port could say as much.
			jobwide::Answer a;
			if (jobwide::decode_answer(line_, a))
				return finish(Heard::busy, "an answer that is none");
			if (a.word == jobwide::Answer::Word::busy)
				return finish(Heard::busy, "busy");
			if (a.word == jobwide::Answer::Word::refused)
				return finish(Heard::busy, "refused " + a.reason + ", unsealed: not believed, tried again");
			line_.pop_back();
			return finish(Heard::busy, "an unsealed '" + line_ +
							   "': not the writer's daemon's (another program on its port?)");
		}
		if (!believe_.workers || !believe_.unseal)
			return finish(Heard::busy, "a sealed answer, and no munged here to open it");
		// munged blocks: a worker opens it, and the loop hears the result.
		// The try goes back to the loop with the result, so that its last
		// reference is dropped there.
		asio::post(*believe_.workers, [self = shared_from_this(), credential = std::move(*credential)]() mutable {
			munge::Decoded d = self->believe_.unseal(credential);
			auto exec = self->sock_.get_executor();
			asio::post(exec, [self = std::move(self), d = std::move(d)] { self->opened(d); });
		});
	}

	void opened(const munge::Decoded &d)
	{
		if (d.status != munge::Decoded::Status::ok)
			return finish(Heard::busy, std::string("an answer munged does not open (") +
							   munge::status_name(d.status) + (d.error.empty() ? "" : ": " + d.error) + ")");
		const auto &trusted = believe_.trusted;
		if (std::find(trusted.begin(), trusted.end(), d.uid) == trusted.end())
			return finish(Heard::busy, "an answer sealed by uid " + std::to_string(d.uid) +
							   ", not by the writer's daemon (another program on its port?)");
		jobwide::Answer a;
		if (auto why = jobwide::decode_answer_payload(d.payload, believe_.part, a))
			return finish(Heard::busy, "a sealed answer that is not this part's (" + *why + ")");
		switch (a.word) {
		case jobwide::Answer::Word::ok:
		case jobwide::Answer::Word::dup:
			return finish(Heard::taken, "");
		case jobwide::Answer::Word::busy:
			return finish(Heard::busy, "busy");
		case jobwide::Answer::Word::refused:
			return finish(Heard::refused, a.reason);
		}
	}

	// Once: the first of the answer, an error and the deadline.
	void finish(Heard heard, const std::string &why)
	{
		if (!done_)
			return;
		Sent done = std::move(done_);
		done_ = nullptr;
		// A writer's door closes a peer from an unreserved port unanswered.
		const std::string said = heard == Heard::busy && !unreserved_.empty()
						 ? why + " (from an unreserved port: " + unreserved_ + ")"
						 : why;
		timer_.cancel();
		resolver_.cancel();
		boost::system::error_code ignored;
		sock_.close(ignored);
		done(heard, said);
	}

	tcp::resolver resolver_;
	tcp::socket sock_;
	asio::steady_timer timer_;
	SendTo to_;
	std::string frame_, line_;
	Believe believe_;
	Sent done_;
	std::string unreserved_;	// why this try left from an unreserved port
};

} // namespace

void send_frame(asio::io_context &io, const SendTo &to, const std::string &frame, Believe believe, Sent done)
{
	std::make_shared<Try>(io, to, frame, std::move(believe), std::move(done))->start();
}

} // namespace gos::gpud
