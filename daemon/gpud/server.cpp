#include "daemon/gpud/server.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <deque>

#include "common/util/atomic_file.hpp"
#include "common/util/log.hpp"

namespace gos::gpud {

namespace asio = boost::asio;
using local = asio::local::stream_protocol;

namespace {

// A client that stops reading is cut off rather than buffered without end.
constexpr std::size_t max_queued_bytes = 16 << 20;

bool someone_listens(const std::string &path)
{
	asio::io_context io;
	local::socket probe(io);
	boost::system::error_code ec;
	probe.connect(local::endpoint(path), ec);
	return !ec;
}

} // namespace

class Server::Connection : public std::enable_shared_from_this<Connection> {
public:
	Connection(local::socket sock, Daemon &daemon) : sock_(std::move(sock)), daemon_(daemon) {}

	void start()
	{
		auto peer = peer_of(sock_.native_handle());
		if (!peer) {
			GOS_LOG(log::warning, "connection without peer credentials refused");
			return;
		}
		pid_ = peer->pid;
		std::weak_ptr<Connection> weak = shared_from_this();
		session_ = daemon_.open(*peer, [weak](proto::Bytes b) {
			if (auto self = weak.lock())
				self->queue(std::move(b));
		});
		read();
	}

private:
	// Reads whatever has arrived and handles every whole frame in it: one
	// wakeup per batch, not two per frame.
	void read()
	{
		auto self = shared_from_this();
		sock_.async_read_some(asio::buffer(buf_), [self](const boost::system::error_code &ec, std::size_t n) {
			if (ec)
				return self->close();
			self->decoder_.feed(self->buf_.data(), n);
			while (!self->closed_) {
				auto f = self->decoder_.next();
				if (!f)
					break;
				if (f->hdr.type >= GOS_WIRE_REPLY) {
					GOS_LOG(log::warning, "pid " << self->pid_ << " sent a non-request; disconnected");
					return self->close();
				}
				self->daemon_.handle(self->session_, *f);
			}
			if (self->decoder_.failed()) {
				GOS_LOG(log::warning, "pid " << self->pid_ << " sent a bad frame ("
							     << self->decoder_.error() << "); disconnected");
				return self->close();
			}
			if (!self->closed_)
				self->read();
		});
	}

	// Called by the daemon, which must not hear of a close from inside its
	// own call: a client that stopped reading is cut off now and closed
	// from the loop.
	void queue(proto::Bytes b)
	{
		if (closed_)
			return;
		queued_ += b.size();
		out_.push_back(std::move(b));
		if (queued_ > max_queued_bytes) {
			GOS_LOG(log::warning, "pid " << pid_ << " stopped reading its messages; disconnected");
			closed_ = true;
			asio::post(sock_.get_executor(), [self = shared_from_this()] { self->release(); });
			return;
		}
		if (!writing_)
			write();
	}

	void write()
	{
		writing_ = true;
		auto self = shared_from_this();
		asio::async_write(sock_, asio::buffer(out_.front()), [self](const boost::system::error_code &ec, std::size_t n) {
			self->writing_ = false;
			if (ec)
				return self->close();
			self->queued_ -= n;
			self->out_.pop_front();
			if (!self->out_.empty())
				self->write();
		});
	}

	void close()
	{
		if (closed_)
			return;
		closed_ = true;
		release();
	}

	// Once, from the event loop: close() or a cut-off client's post.
	void release()
	{
		daemon_.close(session_);
		boost::system::error_code ignored;
		sock_.close(ignored);
	}

	local::socket sock_;
	Daemon &daemon_;
	SessionId session_ = 0;	// the daemon's session, ours from open() until release()
	pid_t pid_ = 0;
	std::array<std::uint8_t, 65536> buf_;
	proto::Decoder decoder_;
	std::deque<proto::Bytes> out_;
	std::size_t queued_ = 0;
	bool writing_ = false, closed_ = false;
};

Server::Server(asio::io_context &io, Daemon &daemon, std::string config_path)
	: io_(io), daemon_(daemon), config_path_(std::move(config_path)), acceptor_(io), signals_(io, SIGHUP, SIGTERM, SIGINT)
{
	const std::string &path = daemon.config().start.socket;
	make_dirs(path.substr(0, path.find_last_of('/')), 0755);
	if (someone_listens(path))
		throw std::runtime_error("another gpuoversubd already serves " + path);
	::unlink(path.c_str());	// a stale socket from a killed daemon
	acceptor_.open(local());
	acceptor_.bind(local::endpoint(path));
	acceptor_.listen();
	// Anyone may connect; each request checks who is asking.
	::chmod(path.c_str(), 0666);
}

void Server::every(std::shared_ptr<asio::steady_timer> timer, const std::uint64_t &interval_ns,
		   void (Daemon::*fn)())
{
	timer->expires_after(std::chrono::nanoseconds(interval_ns));
	timer->async_wait([this, timer, &interval_ns, fn](const boost::system::error_code &ec) {
		if (ec)
			return;
		(daemon_.*fn)();
		every(timer, interval_ns, fn);
	});
}

void Server::accept()
{
	acceptor_.async_accept([this](const boost::system::error_code &ec, local::socket sock) {
		if (!ec)
			std::make_shared<Connection>(std::move(sock), daemon_)->start();
		else if (ec != asio::error::operation_aborted)
			GOS_LOG(log::warning, "accept: " << ec.message());
		if (acceptor_.is_open())
			accept();
	});
}

void Server::on_signal(const boost::system::error_code &ec, int sig)
{
	if (ec)
		return;
	if (sig == SIGHUP) {
		try {
			auto next = config::load_config(config_path_);
			for (const auto &w : daemon_.reload(next))
				GOS_LOG(log::warning, "reload: " << w);
			GOS_LOG(log::notice, "reload: policy " << config_path_ << " applied");
		} catch (const std::exception &e) {
			GOS_LOG(log::error, "reload: keeping the running policy: " << e.what());
		}
		signals_.async_wait([this](const boost::system::error_code &e, int s) { on_signal(e, s); });
		return;
	}
	GOS_LOG(log::notice, "stopping on signal " << sig);
	daemon_.shutdown();
	io_.stop();
}

void Server::run()
{
	accept();
	signals_.async_wait([this](const boost::system::error_code &e, int s) { on_signal(e, s); });
	auto timer = [this] { return std::make_shared<asio::steady_timer>(io_); };
	const config::Config &cfg = daemon_.config();
	every(timer(), cfg.policy.return_interval_ns, &Daemon::tick);
	every(timer(), cfg.policy.balloon_period_ns, &Daemon::balloon_tick);
	every(timer(), cfg.start.usage_period_ns, &Daemon::usage_tick);
	every(timer(), cfg.start.usage_period_ns, &Daemon::slurm_tick);
	every(timer(), cfg.start.persist_period_ns, &Daemon::persist_tick);
	every(timer(), cfg.policy.exporter_period_ns, &Daemon::export_tick);
	io_.run();
	::unlink(daemon_.config().start.socket.c_str());
}

} // namespace gos::gpud
