#include "common/proto/client.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <algorithm>

namespace gos::proto {

std::string root_socket_of(const std::string &socket_path)
{
	const std::string ext = ".sock";
	if (socket_path.size() > ext.size() && socket_path.ends_with(ext))
		return socket_path.substr(0, socket_path.size() - ext.size()) + ".root" + ext;
	return socket_path + ".root";
}

std::optional<uid_t> Client::peer_uid() const
{
	struct ucred cred {};
	socklen_t len = sizeof cred;
	if (::getsockopt(fd_, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
		return std::nullopt;
	return cred.uid;
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

Client::Client(const std::string &path, Path which) : Client(path, Options{which, 30000, std::nullopt}) {}

Client::Client(const std::string &path, Options options) : options_(std::move(options))
{
	// Only a missing or dead root socket means an older daemon; any other
	// failure there is reported, not hidden by the public socket.
	bool root = options_.path == Path::privileged && ::geteuid() == 0;
	std::string where = root ? root_socket_of(path) : path;
	int err = connect_to(where);
	if (root && (err == ENOENT || err == ECONNREFUSED)) {
		where = path;
		err = connect_to(where);
	}
	if (err)
		throw ProtocolError("cannot reach gpuoversubd at " + where + ": " + std::strerror(err) +
					    (err == ENOENT || err == ECONNREFUSED ? " (is the daemon running?)" : ""),
				    err);
	if (options_.reader)
		reader_ = std::thread([this] { read_loop(); });
}

Client::~Client()
{
	if (fd_ < 0)
		return;	// abandoned
	::shutdown(fd_, SHUT_RDWR);	// ends the reader's read
	if (reader_.joinable())
		reader_.join();
	::close(fd_);
}

void Client::abandon()
{
	if (fd_ < 0)
		return;	// already abandoned: no close(-1), errno left alone
	::close(fd_);
	fd_ = -1;
}

void Client::lose(const std::string &why)
{
	std::lock_guard lk(mu_);
	if (!dead_)
		why_ = why;
	dead_ = true;
	cv_.notify_all();
}

std::string Client::closed_text() const
{
	const std::string &why = refusal_.empty() ? why_ : refusal_;
	return "gpuoversubd closed the connection" + (why.empty() ? std::string() : ": " + why);
}

// What one read() gave: frames, or the end (got <= 0; errno then says why).
void Client::received(const std::uint8_t *data, ssize_t got)
{
	if (got <= 0) {
		lose(got < 0 ? std::string("read: ") + std::strerror(errno) : std::string());
		return;
	}
	decoder_.feed(data, static_cast<std::size_t>(got));
	while (auto f = decoder_.next())
		deliver(*f);
	if (decoder_.failed())
		lose("bad frame from the daemon: " + decoder_.error());
}

void Client::deliver(const Frame &f)
{
	if (f.hdr.type == GOS_WIRE_ORDER) {	// its size was checked with its header
		gos_wire_order o;
		std::memcpy(&o, f.payload.data(), sizeof o);
		if (options_.reader) {
			options_.reader->order(o);
		} else {
			std::lock_guard lk(mu_);
			orders_.push_back(o);
		}
		return;
	}
	auto rep = decode_reply(f);
	if (!rep) {
		lose("malformed reply from the daemon");
		return;
	}
	std::lock_guard lk(mu_);
	// Sequence 0 answers no request: the daemon's reason for closing (a
	// protocol version it does not speak, too many connections).
	if (f.hdr.seq == 0) {
		if (rep->status) {
			refusal_ = rep->error;
			dead_ = true;
			cv_.notify_all();
		}
		return;
	}
	auto it = pending_.find(f.hdr.seq);
	if (it == pending_.end())
		return;	// posted, or its call timed out
	it->second = std::move(*rep);
	cv_.notify_all();
}

void Client::read_loop()
{
	std::uint8_t buf[65536];
	for (;;) {
		ssize_t got = ::read(fd_, buf, sizeof buf);
		if (got < 0 && errno == EINTR)
			continue;
		received(buf, got);
		if (got <= 0 || decoder_.failed())
			break;
	}
	lose({});
	if (options_.reader->lost)
		options_.reader->lost();
}

bool Client::pump(int timeout_ms)
{
	pollfd p{fd_, POLLIN, 0};
	int n = ::poll(&p, 1, timeout_ms);
	if (n < 0 && errno != EINTR)
		throw ProtocolError(std::string("poll: ") + std::strerror(errno));
	if (n <= 0)
		return false;
	std::uint8_t buf[65536];
	ssize_t got = ::read(fd_, buf, sizeof buf);
	if (got < 0 && errno == EINTR)
		return false;
	received(buf, got);
	return true;
}

void Client::send_frame(const Bytes &frame)
{
	std::unique_lock w(write_mu_);
	for (std::size_t off = 0; off < frame.size();) {
		ssize_t put = ::send(fd_, frame.data() + off, frame.size() - off, MSG_NOSIGNAL);
		if (put < 0 && errno == EINTR)
			continue;
		if (put > 0) {
			off += static_cast<std::size_t>(put);
			continue;
		}
		std::string why = std::string("send: ") + std::strerror(errno);
		w.unlock();
		if (options_.reader) {
			::shutdown(fd_, SHUT_RDWR);	// the reader reads what is left, then reports the loss
		} else {
			while (!dead_ && pump(0))	// a refusal the daemon sent before closing says why
				;
			lose(why);
		}
		return;
	}
}

std::uint32_t Client::start(std::uint16_t type, const void *payload, std::size_t len, bool awaited)
{
	std::unique_lock lk(mu_);
	if (dead_)
		throw ProtocolError(closed_text());
	std::uint32_t seq = ++seq_ ? seq_ : ++seq_;	// 0 is the daemon's own
	if (awaited)
		pending_[seq];
	lk.unlock();
	send_frame(encode(type, seq, payload, len));
	return seq;
}

std::uint32_t Client::send(std::uint16_t type, const void *payload, std::size_t len)
{
	return start(type, payload, len, true);
}

void Client::post(std::uint16_t type, const void *payload, std::size_t len)
{
	start(type, payload, len, false);
}

Reply Client::call(std::uint16_t type, const void *payload, std::size_t len, int timeout_ms)
{
	return await(send(type, payload, len), timeout_ms);
}

Reply Client::await(std::uint32_t seq, int timeout_ms)
{
	if (timeout_ms == as_configured)
		timeout_ms = options_.timeout_ms;
	auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(timeout_ms, 0));
	std::unique_lock lk(mu_);
	for (;;) {
		auto it = pending_.find(seq);
		if (it == pending_.end())
			throw std::logic_error("await of a request not sent");
		if (it->second) {
			Reply rep = std::move(*it->second);
			pending_.erase(it);
			return rep;
		}
		if (dead_) {
			pending_.erase(it);
			throw ProtocolError(closed_text());
		}
		int wait = -1;
		if (timeout_ms >= 0) {
			auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
			if (left.count() <= 0) {	// a hung daemon: give up on it rather than block the caller
				pending_.erase(it);
				lk.unlock();
				::shutdown(fd_, SHUT_RDWR);
				lose("no reply within " + std::to_string(timeout_ms) + " ms");
				throw ProtocolError("gpuoversubd did not answer within " + std::to_string(timeout_ms) + " ms");
			}
			wait = static_cast<int>(left.count());
		}
		if (options_.reader) {
			if (wait < 0)
				cv_.wait(lk);
			else
				cv_.wait_until(lk, deadline);
		} else {
			lk.unlock();
			pump(wait);
			lk.lock();
		}
	}
}

std::optional<gos_wire_order> Client::next_order(int timeout_ms)
{
	auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
	for (;;) {
		{
			std::lock_guard lk(mu_);
			if (!orders_.empty()) {
				gos_wire_order o = orders_.front();
				orders_.pop_front();
				return o;
			}
			if (dead_)
				throw ProtocolError(closed_text());
		}
		auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
		if (left.count() <= 0)
			return std::nullopt;
		pump(static_cast<int>(left.count()));
	}
}

} // namespace gos::proto
