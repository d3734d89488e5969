#include "daemon/gpud/jobwide_sender.hpp"

#include <memory>

#include "common/jobwide/frame.hpp"

namespace gos::gpud {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

class Try : public std::enable_shared_from_this<Try> {
public:
	Try(asio::io_context &io, SendTo to, std::string frame, Sent done)
		: resolver_(io), sock_(io), timer_(io), to_(std::move(to)), frame_(std::move(frame)), done_(std::move(done))
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
		if (bind && from.is_v4() == at.address().is_v4()) {
			boost::system::error_code ignored;
			sock_.bind(tcp::endpoint(from, 0), ignored);
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
		asio::async_read_until(sock_, asio::dynamic_buffer(line_, jobwide::answer_max_bytes), '\n',
				       [self = shared_from_this()](const boost::system::error_code &ec, std::size_t n) {
					       if (ec)
						       return self->finish(Heard::busy, "no answer: " + ec.message());
					       jobwide::Answer a;
					       if (auto why = jobwide::decode_answer(std::string_view(self->line_).substr(0, n), a))
						       return self->finish(Heard::busy, "an answer that is none (" + *why + ")");
					       switch (a.word) {
					       case jobwide::Answer::Word::ok:
					       case jobwide::Answer::Word::dup:
						       return self->finish(Heard::taken, "");
					       case jobwide::Answer::Word::busy:
						       return self->finish(Heard::busy, "busy");
					       case jobwide::Answer::Word::refused:
						       return self->finish(Heard::refused, a.reason);
					       }
				       });
	}

	// Once: the first of the answer, an error and the deadline.
	void finish(Heard heard, const std::string &why)
	{
		if (!done_)
			return;
		Sent done = std::move(done_);
		done_ = nullptr;
		timer_.cancel();
		resolver_.cancel();
		boost::system::error_code ignored;
		sock_.close(ignored);
		done(heard, why);
	}

	tcp::resolver resolver_;
	tcp::socket sock_;
	asio::steady_timer timer_;
	SendTo to_;
	std::string frame_, line_;
	Sent done_;
};

} // namespace

void send_frame(asio::io_context &io, const SendTo &to, const std::string &frame, Sent done)
{
	std::make_shared<Try>(io, to, frame, std::move(done))->start();
}

} // namespace gos::gpud
