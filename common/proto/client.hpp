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

class Client {
public:
	// Throws ProtocolError naming the socket and the reason.
	explicit Client(const std::string &socket_path);
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
	bool pump(int timeout_ms);	// reads what is there; false on timeout
	int fd_ = -1;
	std::uint32_t seq_ = 0;
	Decoder decoder_;
	std::deque<gos_wire_order> orders_;
	std::deque<Frame> replies_;
};

} // namespace gos::proto
