#include "common/proto/client.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace gos::proto {

std::string root_socket_of(const std::string &socket_path)
{
	const std::string ext = ".sock";
	if (socket_path.size() > ext.size() && socket_path.ends_with(ext))
		return socket_path.substr(0, socket_path.size() - ext.size()) + ".root" + ext;
	return socket_path + ".root";
}

int Client::connect_to(const std::string &path)
{
	sockaddr_un addr{};
	addr.sun_family = AF_UNIX;
	if (path.size() >= sizeof addr.sun_path)
		throw ProtocolError(path + ": socket path too long");
	std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
	fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd_ < 0)
		throw ProtocolError(std::string("socket: ") + std::strerror(errno));
	if (::connect(fd_, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0)
		return 0;
	int err = errno;
	::close(fd_);
	fd_ = -1;
	return err;
}

Client::Client(const std::string &path, Path which)
{
	// Only a missing or dead root socket means an older daemon; any other
	// failure there is reported, not hidden by the public socket.
	bool root = which == Path::privileged && ::geteuid() == 0;
	std::string where = root ? root_socket_of(path) : path;
	int err = connect_to(where);
	if (root && (err == ENOENT || err == ECONNREFUSED)) {
		where = path;
		err = connect_to(where);
	}
	if (err)
		throw ProtocolError("cannot reach gpuoversubd at " + where + ": " + std::strerror(err) +
				    (err == ENOENT || err == ECONNREFUSED ? " (is the daemon running?)" : ""));
}

Client::~Client()
{
	if (fd_ >= 0)
		::close(fd_);
}

bool Client::pump(int timeout_ms)
{
	pollfd p{fd_, POLLIN, 0};
	int n = ::poll(&p, 1, timeout_ms);
	if (n < 0 && errno == EINTR)
		return false;
	if (n < 0)
		throw ProtocolError(std::string("poll: ") + std::strerror(errno));
	if (n == 0)
		return false;
	std::uint8_t buf[65536];
	ssize_t got = ::read(fd_, buf, sizeof buf);
	if (got < 0 && errno == EINTR)
		return false;
	if (got <= 0)
		throw ProtocolError(got == 0 ? "the daemon closed the connection" : std::string("read: ") + std::strerror(errno));
	decoder_.feed(buf, static_cast<std::size_t>(got));
	while (auto f = decoder_.next()) {
		if (f->hdr.type == GOS_WIRE_ORDER) {
			gos_wire_order o;
			if (decode(*f, o))
				throw ProtocolError("malformed order from the daemon");
			orders_.push_back(o);
		} else if (f->hdr.seq == 0) {	// the daemon's word on the connection itself
			auto rep = decode_reply(*f);
			throw ProtocolError("gpuoversubd closed the connection: " +
					    (rep ? rep->error : std::string("malformed reply")));
		} else {
			replies_.push_back(std::move(*f));
		}
	}
	if (decoder_.failed())
		throw ProtocolError("bad frame from the daemon: " + decoder_.error());
	return true;
}

Reply Client::call(std::uint16_t type, const void *payload, std::size_t len, int timeout_ms)
{
	std::uint32_t seq = ++seq_;
	Bytes frame = encode(type, seq, payload, len);
	for (std::size_t off = 0; off < frame.size();) {
		ssize_t put = ::send(fd_, frame.data() + off, frame.size() - off, MSG_NOSIGNAL);
		if (put < 0 && errno == EINTR)
			continue;
		if (put < 0) {
			int err = errno;
			pump(0);	// a refusal the daemon sent before closing says why
			throw ProtocolError(std::string("send to the daemon: ") + std::strerror(err));
		}
		off += static_cast<std::size_t>(put);
	}
	auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
	for (;;) {
		for (auto it = replies_.begin(); it != replies_.end(); ++it) {
			if (it->hdr.seq != seq)
				continue;
			auto rep = decode_reply(*it);
			replies_.erase(it);
			if (!rep)
				throw ProtocolError("malformed reply from the daemon");
			return *rep;
		}
		int wait = -1;
		if (timeout_ms >= 0) {
			auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
			if (left.count() <= 0)
				throw ProtocolError("no reply from the daemon within " + std::to_string(timeout_ms) + " ms");
			wait = static_cast<int>(left.count());
		}
		pump(wait);
	}
}

std::optional<gos_wire_order> Client::next_order(int timeout_ms)
{
	auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
	while (orders_.empty()) {
		auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
		if (left.count() <= 0 || !pump(static_cast<int>(left.count())))
			if (orders_.empty() && std::chrono::steady_clock::now() >= deadline)
				return std::nullopt;
	}
	gos_wire_order o = orders_.front();
	orders_.pop_front();
	return o;
}

} // namespace gos::proto
