// The one client of the daemon's socket: gpuoversubctl, the SPANK plugin,
// the agent (mpi-hooks/agent/daemon_client.cpp adapts it to DaemonCalls and
// EngineCalls), tests and the benchmark. Requests with replies matched by
// sequence number, typed stubs generated from the request table
// (requests.def), and the order frames the daemon pushes to agents.
//
// Without a reader, calls are made by one thread, which reads the socket
// while it waits; orders are queued for next_order(). With one (the
// agent's), a thread of the client's own reads: orders go to its handler
// as they come, calls may come from any thread.
#pragma once

#include <cerrno>
#include <condition_variable>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include <sys/types.h>

#include "common/proto/requests.hpp"
#include "common/proto/wire.hpp"

namespace gos::proto {

// The connection failed or is gone: unreachable, closed (with the daemon's
// reason when it gave one), silent past the timeout, or speaking nonsense.
// code() is the errno the agent hands on: ENOTCONN, or EPROTO for a reply
// of the wrong shape, or connect()'s own.
class ProtocolError : public std::runtime_error {
public:
	explicit ProtocolError(const std::string &what, int code = ENOTCONN) : std::runtime_error(what), code_(code) {}
	int code() const { return code_; }

private:
	int code_;
};

// The socket only root can open beside a daemon's socket, served apart so
// that users flooding the public one cannot starve root's requests:
// DIR/NAME.sock gives DIR/NAME.root.sock, any other path PATH.root.
std::string root_socket_of(const std::string &socket_path);

// A reply whose body is a fixed struct: value holds it when status is 0.
template <class T>
struct Typed : Reply {
	T value{};
};

class Client {
public:
	// privileged: root's requests (the SPANK plugin, the epilog, the admin):
	// a process running as root connects to root_socket_of(socket_path)
	// when that exists, else to socket_path (a daemon older than the root
	// socket); any other process to socket_path.
	enum class Path { as_given, privileged };
	// The reader thread's handlers: order runs on it for each pushed order;
	// lost runs on it once, when the connection is gone.
	struct Reader {
		std::function<void(const gos_wire_order &)> order;
		std::function<void()> lost;
	};
	struct Options {
		Path path = Path::as_given;
		// How long a call waits for its reply (< 0: forever). Past it the
		// daemon is taken for hung: the connection is shut and the call,
		// and every later one, fails.
		int timeout_ms = 30000;
		std::optional<Reader> reader;
	};

	// Throws ProtocolError naming the socket and the reason.
	explicit Client(const std::string &socket_path, Path path = Path::as_given);
	Client(const std::string &socket_path, Options options);
	~Client();
	Client(const Client &) = delete;
	Client &operator=(const Client &) = delete;

	// Sends a request and waits for its reply. A reply with a status < 0 is
	// returned; a lost connection throws.
	// timeout_ms: as_configured (Options::timeout_ms), < 0 forever, or ms.
	static constexpr int as_configured = std::numeric_limits<int>::min();
	Reply call(std::uint16_t type, const void *payload, std::size_t len, int timeout_ms = as_configured);
	template <class T>
	Reply call(std::uint16_t type, const T &payload, int timeout_ms = as_configured)
	{
		return call(type, &payload, sizeof payload, timeout_ms);
	}
	Reply call(std::uint16_t type, int timeout_ms = as_configured) { return call(type, nullptr, 0, timeout_ms); }

	// The same in two halves, for pipelining: send() every request, then
	// await() each reply, in any order.
	std::uint32_t send(std::uint16_t type, const void *payload, std::size_t len);
	Reply await(std::uint32_t seq, int timeout_ms = as_configured);
	// A request whose reply nobody waits for; the daemon handles requests
	// in order, so later ones see it.
	void post(std::uint16_t type, const void *payload, std::size_t len);

	// Typed stubs, one per row of requests.def: client.alloc(req) returns
	// Typed<gos_rep_alloc>, client.status() the JSON's Reply, and
	// client.rank_report(head, records, count) sends head and records.
#define GOS_REQUEST(NAME, name, ...)                         \
	template <class... Args>                             \
	auto name(const Args &...args)                       \
	{                                                    \
		return ask<Request<GOS_REQ_##NAME>>(GOS_REQ_##NAME, args...); \
	}
#include <gpuoversub/requests.def>
#undef GOS_REQUEST

	// The same halves and the unawaited form for a row with a fixed
	// payload, its type checked against the row's: send<GOS_REQ_X>(req).
	template <std::uint16_t Type>
	std::uint32_t send(const typename Request<Type>::In::type &req)
	{
		return send(Type, &req, sizeof req);
	}
	template <std::uint16_t Type>
	void post(const typename Request<Type>::In::type &req)
	{
		post(Type, &req, sizeof req);
	}

	// Without a reader: the next pushed order, waiting up to timeout_ms.
	std::optional<gos_wire_order> next_order(int timeout_ms);
	int fd() const { return fd_; }
	// The daemon's uid (SO_PEERCRED), or nothing if the kernel will not say.
	std::optional<uid_t> peer_uid() const;
	// Closes the socket without a word and without joining the reader: for
	// a forked child, whose copy of the connection is its parent's. The
	// client is then only fit to be leaked (its reader is not the child's).
	// A second call does nothing.
	void abandon();

private:
	template <class Spec, class... Args>
	auto ask(std::uint16_t type, const Args &...args)
	{
		Reply rep = Spec::In::send(*this, type, args...);
		if constexpr (Spec::Out::kind == Body::fixed) {
			Typed<typename Spec::Out::type> typed;
			static_cast<Reply &>(typed) = std::move(rep);
			if (typed.status == 0) {
				if (typed.body.size() != sizeof typed.value)
					throw ProtocolError("reply of the wrong size from gpuoversubd", EPROTO);
				std::memcpy(&typed.value, typed.body.data(), sizeof typed.value);
			}
			return typed;
		} else {
			return rep;
		}
	}

	int connect_to(const std::string &path);	// errno on failure
	std::uint32_t start(std::uint16_t type, const void *payload, std::size_t len, bool awaited);
	void send_frame(const Bytes &frame);
	bool pump(int timeout_ms);	// without a reader: reads what is there; false on timeout
	void read_loop();		// the reader's
	void received(const std::uint8_t *data, ssize_t got);
	void deliver(const Frame &f);
	void lose(const std::string &why);	// marks the connection gone, with why
	std::string closed_text() const;	// with mu_ held

	Options options_;
	int fd_ = -1;
	Decoder decoder_;	// the reader's, or the calling thread's without one
	std::mutex write_mu_;	// whole frames, one at a time
	std::mutex mu_;		// what follows
	std::condition_variable cv_;
	std::uint32_t seq_ = 0;
	std::map<std::uint32_t, std::optional<Reply>> pending_;	// awaited replies, by seq
	std::deque<gos_wire_order> orders_;	// without a reader
	bool dead_ = false;
	std::string why_;	// why the connection is gone
	std::string refusal_;	// the daemon's reason for closing (a reply of seq 0)
	std::thread reader_;
};

} // namespace gos::proto
