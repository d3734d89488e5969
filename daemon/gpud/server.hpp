// The event loop: a Unix socket served with Boost.Asio, the daemon's
// timers, and signals (SIGHUP reloads, SIGTERM and SIGINT stop cleanly).
#pragma once

#include <utility>	// before asio: Boost 1.74 needs std::exchange

#include <boost/asio.hpp>

#include <memory>
#include <string>

#include "common/config/config.hpp"
#include "daemon/gpud/daemon.hpp"

namespace gos::gpud {

class Server {
public:
	// Binds the socket; throws if another daemon already listens there.
	Server(boost::asio::io_context &io, Daemon &daemon, std::string config_path);
	void run();

private:
	class Connection;
	void accept();
	// Runs fn every interval: a setting of the daemon's configuration, read
	// again each time so a reload applies.
	void every(std::shared_ptr<boost::asio::steady_timer> timer, const std::uint64_t &interval_ns,
		   void (Daemon::*fn)());
	void on_signal(const boost::system::error_code &ec, int sig);

	boost::asio::io_context &io_;
	Daemon &daemon_;
	std::string config_path_;
	boost::asio::local::stream_protocol::acceptor acceptor_;
	boost::asio::signal_set signals_;
};

} // namespace gos::gpud
