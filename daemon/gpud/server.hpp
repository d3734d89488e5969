// The event loop: the daemon's two Unix sockets served with Boost.Asio, its
// timers, and signals (SIGHUP reloads, SIGTERM and SIGINT stop cleanly).
//
// The public socket (mode 0666) takes anyone: each user but root at most
// max_connections_per_uid connections that are not agents (a job's
// processes, which said hello, are counted per job instead, at most
// max_agents_per_job: a node's ranks may be many), and all of them together
// never the last reserved_descriptors of the daemon's limit. The root
// socket beside it (proto::root_socket_of, mode 0600) has its own accept
// loop, so that root's requests (the SPANK plugin, the epilog, the admin)
// are never queued behind a flood of the public one; the route table still
// decides every request by the caller's credentials.
#pragma once

#include <utility>	// before asio: Boost 1.74 needs std::exchange

#include <boost/asio.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "common/config/config.hpp"
#include "common/util/rate_limit.hpp"
#include "daemon/gpud/connection.hpp"
#include "daemon/gpud/daemon.hpp"
#include "daemon/gpud/jobwide_io.hpp"
#include "daemon/gpud/systemd_notify.hpp"

namespace gos::gpud {

class Server {
public:
	// Binds the sockets; throws if another daemon already listens there.
	// MUNGED opens and seals the job-wide channel's credentials.
	Server(boost::asio::io_context &io, Daemon &daemon, std::string config_path, Munged munged);
	void run();

private:
	using Acceptor = boost::asio::local::stream_protocol::acceptor;
	struct Listener {
		Listener(boost::asio::io_context &io, std::string p, bool root) : acceptor(io), backoff_timer(io), path(std::move(p)), root_only(root) {}
		Acceptor acceptor;
		boost::asio::steady_timer backoff_timer;
		std::chrono::milliseconds backoff{0};	// after running out of descriptors
		RateLimit log{std::chrono::seconds(10)};
		std::string path;
		bool root_only;
	};
	void listen(Listener &l, mode_t mode);
	void accept(Listener &l);
	void take_connection(Listener &l, Connection::Socket sock);
	// Runs fn every interval: a setting of the daemon's configuration, read
	// again each time so a reload applies.
	void every(std::shared_ptr<boost::asio::steady_timer> timer, const std::uint64_t &interval_ns,
		   void (Daemon::*fn)());
	void trim_tick();
	void prune_tick();
	void service_tick();
	void tell_ready();
	void on_signal(const boost::system::error_code &ec, int sig);

	boost::asio::io_context &io_;
	Daemon &daemon_;
	std::string config_path_;
	ConnectionLimits limits_;
	Listener public_, root_;
	std::map<uid_t, std::size_t> held_of_;	// bytes of frames received and not yet handled, per uid
	std::map<uid_t, std::size_t> connections_of_;	// on the public socket, neither root nor agents counted
	std::size_t public_open_ = 0, public_most_ = 0;	// all of the public socket's, and their cap
	bool released_since_trim_ = false;
	boost::asio::steady_timer trim_timer_;
	boost::asio::signal_set signals_;
	SystemdNotify notify_;
	boost::asio::steady_timer service_timer_;
	std::string told_status_;	// the last STATUS= systemd was sent
	JobwideIo jobwide_;	// its workers' results come back to the loop
	boost::asio::steady_timer prune_timer_;
	boost::asio::thread_pool chores_{1};	// last: reports.dir's pruning, joined first
};

} // namespace gos::gpud
