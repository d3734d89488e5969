// A blocking client of the daemon's socket: requests with replies, and the
// order frames the daemon pushes in between. Used by gpuoversubctl, tests,
// the benchmark and, later, the agent.
#pragma once

#include <deque>
#include <optional>
#include <stdexcept>
#include <string>

#include "common/proto/wire.hpp"

namespace gos::proto {

class ProtocolError : public std::runtime_error {
public:
	using std::runtime_error::runtime_error;
};

// The socket only root can open beside a daemon's socket, served apart so
// that users flooding the public one cannot starve root's requests:
// DIR/NAME.sock gives DIR/NAME.root.sock, any other path PATH.root.
std::string root_socket_of(const std::string &socket_path);

class Client {
public:
	// privileged: root's requests (the SPANK plugin, the epilog, the admin):
	// a process running as root connects to root_socket_of(socket_path)
	// when that exists, else to socket_path (a daemon older than the root
	// socket); any other process to socket_path.
	enum class Path { as_given, privileged };
	// Throws ProtocolError naming the socket and the reason.
	explicit Client(const std::string &socket_path, Path path = Path::as_given);
	~Client();
	Client(const Client &) = delete;
	Client &operator=(const Client &) = delete;

	// Sends a request and waits for its reply; orders arriving meanwhile
	// are queued. timeout_ms < 0 waits forever.
	Reply call(std::uint16_t type, const void *payload, std::size_t len, int timeout_ms = 30000);
	template <class T>
	Reply call(std::uint16_t type, const T &payload, int timeout_ms = 30000)
	{
		return call(type, &payload, sizeof payload, timeout_ms);
	}
	Reply call(std::uint16_t type, int timeout_ms = 30000) { return call(type, nullptr, 0, timeout_ms); }

	// The next pushed order, waiting up to timeout_ms.
	std::optional<gos_wire_order> next_order(int timeout_ms);
	int fd() const { return fd_; }

private:
	int connect_to(const std::string &path);	// errno on failure
	bool pump(int timeout_ms);	// reads what is there; false on timeout
	int fd_ = -1;
	std::uint32_t seq_ = 0;
	Decoder decoder_;
	std::deque<gos_wire_order> orders_;
	std::deque<Frame> replies_;
};

} // namespace gos::proto
