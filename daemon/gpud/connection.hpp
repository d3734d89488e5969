// One client of the daemon's sockets, bounded so that no user can make the
// daemon buffer, wait or spin for them:
//  - each header is checked before its body is read (proto::Decoder);
//  - a turn handles at most frames_per_turn frames, then yields to the loop,
//    so that one peer's pipeline never delays another's (root's) request;
//  - a peer whose replies pile up unread is no longer read from, and one
//    that lets them pass max_output is cut off;
//  - deadlines: a first frame within first_frame, each frame whole within
//    frame, and no more than idle without progress, except for agents (who
//    said hello and stay connected for their job's life);
//  - a bad frame gets an error reply (seq 0) before the close.
#pragma once

#include <utility>	// before asio: Boost 1.74 needs std::exchange

#include <boost/asio.hpp>

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include "common/proto/wire.hpp"
#include "daemon/gpud/daemon.hpp"

namespace gos::gpud {

struct ConnectionLimits {
	std::chrono::milliseconds first_frame{5000}, frame{5000}, idle{30000};
	std::size_t frames_per_turn = 32;
	std::size_t pause_output = 256 << 10;	// stop reading while this much is unread
	std::size_t max_output = 16 << 20;	// an agent not reading its orders is cut off
	std::size_t max_held_per_uid = 16 << 20;	// one user's frames not yet handled and replies not yet read
};

// What the server counts, told by the connection.
struct ConnectionHooks {
	// Once, when it becomes an agent (its job's process: no longer counted
	// against its user's cap) or goes, whichever is first; may be empty.
	std::function<void()> uncount;
	std::function<void()> released;	// once, when it is gone
	// The bytes it holds (frames received and not handled, replies queued
	// and not read) changed by delta; false when its user now holds more
	// than max_held_per_uid. May be empty (root's).
	std::function<bool(std::int64_t delta)> held;
};

class Connection : public std::enable_shared_from_this<Connection> {
public:
	using Socket = boost::asio::local::stream_protocol::socket;
	using Clock = std::chrono::steady_clock;

	Connection(Socket sock, Daemon &daemon, const Peer &peer, const ConnectionLimits &limits,
		   ConnectionHooks hooks);
	void start();

	// Tells the peer why (a reply with seq 0, if its buffer has room: the
	// daemon never waits for it), then closes.
	static void refuse(Socket &sock, int status, std::string_view why);

private:
	void wait_readable();
	void pump();		// handles frames and reads until the peer or a bound stops it
	bool sender_gone();
	bool refused_at_header();	// a frame begun that the peer may not send
	bool charge();			// tells hooks_.held what it holds now; false when its user holds too much
	bool over_held();		// its user holds too many bytes: cut off
	void queue(proto::Bytes b);
	void hang_up();		// closes from the loop, never inside the daemon's call
	void write();
	bool in_frame() const;	// a frame begun and not yet whole, the peer's to finish
	std::optional<Clock::time_point> deadline() const;
	void arm_timer();
	void close();
	void release();

	Socket sock_;
	Daemon &daemon_;
	Peer peer_;
	const ConnectionLimits &limits_;
	ConnectionHooks hooks_;
	boost::asio::steady_timer timer_;
	SessionId session_ = 0;	// the daemon's session, ours from start() until release()
	proto::Decoder decoder_{proto::Decoder::Accepts::requests};
	std::deque<proto::Bytes> out_;
	std::size_t queued_ = 0;
	std::size_t charged_ = 0;	// decoder and output bytes told to hooks_.held
	std::uint64_t frames_ = 0;
	Clock::time_point opened_, last_progress_;
	std::optional<Clock::time_point> frame_since_;	// a frame begun and not yet whole
	std::uint64_t frame_since_count_ = 0;		// frames_ when frame_since_ was set
	bool writing_ = false, reading_ = false, paused_ = false, timer_armed_ = false, closed_ = false;
};

} // namespace gos::gpud
