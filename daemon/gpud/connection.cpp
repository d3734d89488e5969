#include "daemon/gpud/connection.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>

#include "common/util/log.hpp"
#include "common/util/rate_limit.hpp"

namespace gos::gpud {

namespace asio = boost::asio;

namespace {

// Every read lands here and is copied into the connection's decoder at once:
// the loop is single-threaded, and an idle connection holds no read buffer.
std::array<std::uint8_t, 65536> read_buffer;

// A flood repeats the same complaint: one line per interval says it.
RateLimit bad_frame_log{std::chrono::seconds(10)};
RateLimit timeout_log{std::chrono::seconds(10)};
RateLimit unread_log{std::chrono::seconds(10)};

} // namespace

Connection::Connection(Socket sock, Daemon &daemon, const Peer &peer, const ConnectionLimits &limits,
		       ConnectionHooks hooks)
	: sock_(std::move(sock)), daemon_(daemon), peer_(peer), limits_(limits), hooks_(std::move(hooks)),
	  timer_(sock_.get_executor())
{
}

void Connection::refuse(Socket &sock, int status, std::string_view why)
{
	proto::Bytes b = proto::encode_reply(0, status, why, nullptr, 0);
	[[maybe_unused]] ssize_t n = ::send(sock.native_handle(), b.data(), b.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
	boost::system::error_code ignored;
	sock.close(ignored);
}

void Connection::start()
{
	boost::system::error_code ec;
	sock_.non_blocking(true, ec);
	if (ec) {
		GOS_LOG(log::warning, "pid " << peer_.pid << ": " << ec.message() << "; disconnected");
		return release();
	}
	std::weak_ptr<Connection> weak = shared_from_this();
	session_ = daemon_.open(
		peer_,
		[weak](proto::Bytes b) {
			if (auto self = weak.lock())
				self->queue(std::move(b));
		},
		[weak] {
			if (auto self = weak.lock())
				self->hang_up();
		});
	opened_ = last_progress_ = Clock::now();
	wait_readable();
	arm_timer();
}

void Connection::wait_readable()
{
	if (reading_ || closed_)
		return;
	reading_ = true;
	sock_.async_wait(Socket::wait_read, [self = shared_from_this()](const boost::system::error_code &ec) {
		self->reading_ = false;
		if (ec)
			return self->close();
		self->pump();
	});
}

// A root request (the SPANK plugin's) whose sender has hung up is not
// applied: the plugin gave up on it, and would not undo it.
bool Connection::sender_gone()
{
	if (peer_.uid != 0 || daemon_.is_agent(session_))
		return false;
	pollfd p{sock_.native_handle(), POLLRDHUP, 0};
	return ::poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP));
}

void Connection::pump()
{
	paused_ = false;
	std::size_t budget = limits_.frames_per_turn;
	while (!closed_) {
		while (budget && queued_ < limits_.pause_output) {
			auto f = decoder_.next();
			if (!f)
				break;
			--budget;
			++frames_;
			if (sender_gone()) {
				GOS_LOG(log::warning, "pid " << peer_.pid << " hung up before its request " << f->hdr.type
							     << " was served; not applied");
				return close();
			}
			daemon_.handle(session_, *f);
			if (closed_)
				return;
			if (hooks_.uncount && daemon_.is_agent(session_))
				std::exchange(hooks_.uncount, nullptr)();
		}
		if (refused_at_header())
			return;
		if (decoder_.failed()) {
			GOS_LOG_LIMITED(bad_frame_log, log::warning,
					"pid " << peer_.pid << " sent a bad frame (" << decoder_.error() << "); disconnected");
			closed_ = true;
			refuse(sock_, -EPROTO, decoder_.error());
			return release();
		}
		if (queued_ >= limits_.pause_output) {
			paused_ = true;	// write() resumes once the peer reads
			return arm_timer();
		}
		if (!budget) {	// others' turn; this one goes on after them
			asio::post(sock_.get_executor(), [self = shared_from_this()] { self->pump(); });
			return;
		}
		boost::system::error_code ec;
		std::size_t n = sock_.read_some(asio::buffer(read_buffer), ec);
		if (ec == asio::error::would_block) {
			if (!decoder_.partial())
				frame_since_.reset();
			else if (!frame_since_ || frame_since_count_ != frames_) {
				frame_since_ = Clock::now();
				frame_since_count_ = frames_;
			}
			decoder_.release();
			wait_readable();
			return arm_timer();
		}
		if (ec)
			return close();	// the peer closed, or was killed
		decoder_.feed(read_buffer.data(), n);
		last_progress_ = Clock::now();
		if (over_held())
			return;
	}
}

// Called by the daemon, which must not hear of a close from inside its
// own call: a client that stopped reading is cut off now and closed
// from the loop.
void Connection::queue(proto::Bytes b)
{
	if (closed_)
		return;
	queued_ += b.size();
	out_.push_back(std::move(b));
	if (queued_ > limits_.max_output || !charge()) {
		GOS_LOG_LIMITED(unread_log, log::warning,
				"pid " << peer_.pid << " (uid " << peer_.uid << ") stopped reading its messages; disconnected");
		return hang_up();
	}
	if (!writing_)
		write();
}

void Connection::hang_up()
{
	if (closed_)
		return;
	closed_ = true;
	asio::post(sock_.get_executor(), [self = shared_from_this()] { self->release(); });
}

// A frame only root or an agent may send, begun by another: refused on its
// header, so that its body (up to the largest payload) is never buffered.
bool Connection::refused_at_header()
{
	auto h = decoder_.pending();
	if (!h)
		return false;
	auto refused = daemon_.refusal(session_, h->type);
	if (!refused)
		return false;
	GOS_LOG_LIMITED(bad_frame_log, log::warning,
			"pid " << peer_.pid << " began a frame of type " << h->type << " it may not send (" << refused->why
			       << "); disconnected");
	closed_ = true;
	refuse(sock_, refused->status, refused->why);
	release();
	return true;
}

// Unfinished frames and unread replies alike: 250 connections that each
// ask for a large reply and never read it are one user's, bounded as one.
bool Connection::charge()
{
	if (!hooks_.held)
		return true;
	std::size_t now = decoder_.held() + queued_;
	bool ok = hooks_.held(static_cast<std::int64_t>(now) - static_cast<std::int64_t>(charged_));
	charged_ = now;
	return ok;
}

bool Connection::over_held()
{
	if (charge())
		return false;
	GOS_LOG_LIMITED(bad_frame_log, log::warning,
			"uid " << peer_.uid << " holds more than " << (limits_.max_held_per_uid >> 20)
			       << " MiB of unfinished frames and unread replies; pid " << peer_.pid << " disconnected");
	closed_ = true;
	refuse(sock_, -ENOBUFS, "your connections hold more than " + std::to_string(limits_.max_held_per_uid >> 20) +
					" MiB of unfinished frames and unread replies");
	release();
	return true;
}

void Connection::write()
{
	writing_ = true;
	asio::async_write(sock_, asio::buffer(out_.front()), [self = shared_from_this()](const boost::system::error_code &ec, std::size_t n) {
		self->writing_ = false;
		if (ec || self->closed_)
			return self->close();
		self->queued_ -= n;
		self->out_.pop_front();
		self->charge();	// less held now: never over for it
		self->last_progress_ = Clock::now();
		if (!self->out_.empty())
			self->write();
		if (self->paused_ && self->queued_ < self->limits_.pause_output)
			self->pump();
	});
}

// When the connection is closed unless it makes progress: agents, connected
// for their job's life, only for a frame begun and not finished.
bool Connection::in_frame() const
{
	return frame_since_ && frame_since_count_ == frames_;
}

std::optional<Connection::Clock::time_point> Connection::deadline() const
{
	if (in_frame())
		return *frame_since_ + limits_.frame;
	if (daemon_.is_agent(session_))
		return std::nullopt;
	if (!frames_)
		return opened_ + limits_.first_frame;
	return last_progress_ + limits_.idle;
}

void Connection::arm_timer()
{
	auto when = deadline();
	if (!when || closed_ || (timer_armed_ && timer_.expiry() <= *when))
		return;
	timer_armed_ = true;
	timer_.expires_at(*when);	// an earlier wait, if any, ends aborted
	timer_.async_wait([self = shared_from_this()](const boost::system::error_code &ec) {
		if (ec == asio::error::operation_aborted)
			return;
		self->timer_armed_ = false;
		if (self->closed_)
			return;
		auto due = self->deadline();
		if (due && Clock::now() >= *due) {
			GOS_LOG_LIMITED(timeout_log, log::warning,
					"pid " << self->peer_.pid << (self->in_frame() ? " left a frame unfinished"
											 : " sent nothing in time")
					       << "; disconnected");
			return self->close();
		}
		self->arm_timer();
	});
}

void Connection::close()
{
	if (closed_)
		return;
	closed_ = true;
	release();
}

// Once, from the event loop: close(), a refusal, or a cut-off client's post.
void Connection::release()
{
	if (session_)
		daemon_.close(session_);
	session_ = 0;
	boost::system::error_code ignored;
	timer_.cancel();
	sock_.close(ignored);
	out_.clear();
	if (hooks_.held && charged_)
		hooks_.held(-static_cast<std::int64_t>(std::exchange(charged_, 0)));
	if (auto uncount = std::exchange(hooks_.uncount, nullptr))
		uncount();
	if (auto released = std::exchange(hooks_.released, nullptr))
		released();
}

} // namespace gos::gpud
