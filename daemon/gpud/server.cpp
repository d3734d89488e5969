#include "daemon/gpud/server.hpp"

#include <malloc.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "common/proto/client.hpp"
#include "common/util/atomic_file.hpp"
#include "common/util/log.hpp"
#include "daemon/gpud/report_pruning.hpp"

namespace gos::gpud {

namespace asio = boost::asio;
using local = asio::local::stream_protocol;

namespace {

bool someone_listens(const std::string &path)
{
	asio::io_context io;
	local::socket probe(io);
	boost::system::error_code ec;
	probe.connect(local::endpoint(path), ec);
	return !ec;
}

// Every connection is a descriptor: the default soft limit of 1024 is far
// below what a node's agents and a flood together may need. Returns the limit.
std::size_t raise_descriptor_limit()
{
	rlimit r{};
	if (::getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
		r.rlim_cur = r.rlim_max;
		if (::setrlimit(RLIMIT_NOFILE, &r) != 0)
			GOS_LOG(log::warning, "cannot raise the descriptor limit: " << std::strerror(errno));
	}
	if (::getrlimit(RLIMIT_NOFILE, &r) != 0)
		return 1024;
	GOS_LOG(log::info, "descriptor limit " << r.rlim_cur);
	return static_cast<std::size_t>(r.rlim_cur);
}

// Descriptors the public socket's connections, agents included, may never
// take: root's socket, state and report writes, the engine and the log
// keep working when users hold every connection they can.
constexpr std::size_t reserved_descriptors = 64;

constexpr auto first_backoff = std::chrono::milliseconds(100);
constexpr auto last_backoff = std::chrono::milliseconds(1000);
constexpr auto trim_period = std::chrono::seconds(2);
constexpr auto prune_period = std::chrono::hours(1);

} // namespace

Server::Server(asio::io_context &io, Daemon &daemon, std::string config_path, Munged munged)
	: io_(io), daemon_(daemon), config_path_(std::move(config_path)),
	  public_(io, daemon.config().start.socket, false), root_(io, proto::root_socket_of(daemon.config().start.socket), true),
	  trim_timer_(io), signals_(io, SIGHUP, SIGTERM, SIGINT), service_timer_(io), jobwide_(io, daemon, std::move(munged)),
	  prune_timer_(io)
{
	std::size_t limit = raise_descriptor_limit();
	public_most_ = limit > 2 * reserved_descriptors ? limit - reserved_descriptors : limit / 2;
	make_dirs(public_.path.substr(0, public_.path.find_last_of('/')), 0755);
	// Anyone may connect to the public socket; each request checks who is asking.
	listen(public_, 0666);
	listen(root_, 0600);
}

void Server::listen(Listener &l, mode_t mode)
{
	if (someone_listens(l.path))
		throw std::runtime_error("another gpuoversubd already serves " + l.path);
	::unlink(l.path.c_str());	// a stale socket from a killed daemon
	l.acceptor.open(local());
	l.acceptor.bind(local::endpoint(l.path));
	l.acceptor.listen();
	if (::chmod(l.path.c_str(), mode) != 0)
		throw std::runtime_error(l.path + ": chmod: " + std::strerror(errno));
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

// Out of descriptors (or any other failure), accepting again at once would
// spin: wait 100 ms, doubling up to 1 s, until an accept succeeds.
void Server::accept(Listener &l)
{
	l.acceptor.async_accept([this, &l](const boost::system::error_code &ec, local::socket sock) {
		if (ec == asio::error::operation_aborted || !l.acceptor.is_open())
			return;
		if (!ec) {
			l.backoff = std::chrono::milliseconds(0);
			take_connection(l, std::move(sock));
			return accept(l);
		}
		l.backoff = std::clamp(l.backoff * 2, std::chrono::milliseconds(first_backoff), std::chrono::milliseconds(last_backoff));
		GOS_LOG_LIMITED(l.log, log::warning, "accept on " << l.path << ": " << ec.message() << "; retrying in "
								   << l.backoff.count() << " ms");
		l.backoff_timer.expires_after(l.backoff);
		l.backoff_timer.async_wait([this, &l](const boost::system::error_code &e) {
			if (!e)
				accept(l);
		});
	});
}

void Server::take_connection(Listener &l, local::socket sock)
{
	auto peer = peer_of(sock.native_handle());
	if (!peer) {
		GOS_LOG_LIMITED(l.log, log::warning, "connection without peer credentials refused");
		return;
	}
	ConnectionHooks hooks{nullptr, [this] { released_since_trim_ = true; }, nullptr};
	if (!l.root_only) {
		if (public_open_ >= public_most_) {
			GOS_LOG_LIMITED(l.log, log::warning, public_open_ << " connections on the public socket; refused another, "
							"keeping " << reserved_descriptors << " descriptors for root and the daemon's files");
			return Connection::refuse(sock, -EMFILE, "the daemon holds all the connections it serves; try again later");
		}
		++public_open_;
		hooks.released = [this] {
			released_since_trim_ = true;
			--public_open_;
		};
	}
	if (!l.root_only && peer->uid != 0) {
		std::size_t &n = connections_of_[peer->uid];
		std::size_t cap = daemon_.config().policy.max_connections_per_uid;
		if (n >= cap) {
			GOS_LOG_LIMITED(l.log, log::warning, "uid " << peer->uid << " holds " << n << " connections; refused another");
			return Connection::refuse(sock, -EUSERS, "too many connections from uid " + std::to_string(peer->uid) +
								    " (max_connections_per_uid: " + std::to_string(cap) + ")");
		}
		++n;
		hooks.held = [this, uid = peer->uid](std::int64_t delta) {
			std::size_t &held = held_of_[uid];
			held = static_cast<std::size_t>(static_cast<std::int64_t>(held) + delta);
			bool ok = held <= limits_.max_held_per_uid;
			if (!held)
				held_of_.erase(uid);
			return ok;
		};
		hooks.uncount = [this, uid = peer->uid] {
			auto it = connections_of_.find(uid);
			if (it != connections_of_.end() && --it->second == 0)
				connections_of_.erase(it);
		};
	}
	std::make_shared<Connection>(std::move(sock), daemon_, *peer, limits_, std::move(hooks))->start();
}

// A flood's buffers, freed, go back to the system rather than stay in the
// allocator's arenas.
void Server::trim_tick()
{
	trim_timer_.expires_after(trim_period);
	trim_timer_.async_wait([this](const boost::system::error_code &ec) {
		if (ec)
			return;
		if (std::exchange(released_since_trim_, false))
			::malloc_trim(0);
		trim_tick();
	});
}

// reports.dir pruned by reports.keep and reports.max_size, at start and
// every hour, on a thread of its own: a directory of many files never holds
// the loop. What it did is logged from the loop.
void Server::prune_tick()
{
	const config::Policy &p = daemon_.config().policy;
	const auto keep_s = static_cast<std::int64_t>(p.report_keep_ns / 1'000'000'000ULL);
	asio::post(chores_, [this, dir = p.report_dir, keep_s, max = p.report_max_bytes] {
		Pruned r = prune_reports(dir, std::time(nullptr), keep_s, max);
		asio::post(io_, [r = std::move(r)] {
			if (r.files)
				GOS_LOG(log::info, "reports: " << r.files << " file(s) of " << r.bytes
							       << " bytes removed (reports.keep, reports.max_size)");
			for (const std::string &why : r.problems)
				GOS_LOG(log::warning, "reports: a file past reports.keep or reports.max_size stays: " << why);
		});
	});
	prune_timer_.expires_after(prune_period);
	prune_timer_.async_wait([this](const boost::system::error_code &ec) {
		if (!ec)
			prune_tick();
	});
}

// systemd's side, when it started the daemon: WATCHDOG=1 from this loop,
// so that a loop which stops turning stops the pings and systemd restarts
// the daemon (agents reconnect, jobs resume from the state directory);
// STATUS= when what the daemon holds changed. Every second, or twice
// per watchdog period if that is shorter.
void Server::service_tick()
{
	if (!notify_.active())
		return;
	auto period = std::min<std::chrono::microseconds>(notify_.ping_period().value_or(std::chrono::seconds(1)),
							  std::chrono::seconds(1));
	service_timer_.expires_after(period);
	service_timer_.async_wait([this](const boost::system::error_code &ec) {
		if (ec)
			return;
		std::string state = notify_.ping_period() ? "WATCHDOG=1\n" : "";
		if (std::string status = "STATUS=" + daemon_.summary(); status != told_status_) {
			state += status;
			told_status_ = std::move(status);
		}
		if (!state.empty())
			notify_.send(state);
		service_tick();
	});
}

// READY=1 with what the daemon holds: at start, and when a reload is done.
void Server::tell_ready()
{
	told_status_ = "STATUS=" + daemon_.summary();
	notify_.send("READY=1\n" + told_status_);
}

void Server::on_signal(const boost::system::error_code &ec, int sig)
{
	if (ec)
		return;
	if (sig == SIGHUP) {
		timespec now{};
		::clock_gettime(CLOCK_MONOTONIC, &now);
		notify_.send("RELOADING=1\nSTATUS=reloading " + config_path_ + "\nMONOTONIC_USEC=" +
			     std::to_string(static_cast<std::uint64_t>(now.tv_sec) * 1000000u +
					    static_cast<std::uint64_t>(now.tv_nsec) / 1000u));
		try {
			auto next = config::load_config(config_path_);
			for (const auto &w : daemon_.reload(next))
				GOS_LOG(log::warning, "reload: " << w);
			jobwide_.reconfigured();
			GOS_LOG(log::notice, "reload: policy " << config_path_ << " applied");
		} catch (const std::exception &e) {
			GOS_LOG(log::error, "reload: keeping the running policy: " << e.what());
		}
		tell_ready();
		signals_.async_wait([this](const boost::system::error_code &e, int s) { on_signal(e, s); });
		return;
	}
	GOS_LOG(log::notice, "stopping on signal " << sig);
	notify_.send("STOPPING=1\nSTATUS=stopping on signal " + std::to_string(sig));
	daemon_.shutdown();
	io_.stop();
}

void Server::run()
{
	accept(public_);
	accept(root_);
	trim_tick();
	prune_tick();
	signals_.async_wait([this](const boost::system::error_code &e, int s) { on_signal(e, s); });
	auto timer = [this] { return std::make_shared<asio::steady_timer>(io_); };
	const config::Config &cfg = daemon_.config();
	every(timer(), cfg.policy.return_interval_ns, &Daemon::tick);
	every(timer(), cfg.policy.balloon_period_ns, &Daemon::balloon_tick);
	every(timer(), cfg.start.usage_period_ns, &Daemon::usage_tick);
	every(timer(), cfg.start.usage_period_ns, &Daemon::slurm_tick);
	every(timer(), cfg.start.persist_period_ns, &Daemon::persist_tick);
	every(timer(), cfg.policy.exporter_period_ns, &Daemon::export_tick);
	every(timer(), cfg.policy.reconcile_period_ns, &Daemon::reconcile_tick);
	jobwide_.start();
	// Ready only now: both sockets listen (connections wait in their queues
	// until the loop turns), the GPUs are found and the saved jobs resumed.
	tell_ready();
	service_tick();
	io_.run();
	::unlink(public_.path.c_str());
	::unlink(root_.path.c_str());
}

} // namespace gos::gpud
