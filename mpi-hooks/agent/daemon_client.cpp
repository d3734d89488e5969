// EngineClient over gpuoversubd's Unix socket. A reader thread owns the
// receiving side: it hands replies to the callers waiting for them by
// sequence number and orders to the agent. Calls from any thread.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "engine_client.hpp"
#include "common/proto/wire.hpp"
#include "settings.hpp"

namespace gos::agent {
namespace {

thread_local std::string last_error;

class DaemonClient final : public EngineClient {
public:
	DaemonClient(int fd, OrderHandler order, LostHandler lost)
		: fd_(fd), on_order_(std::move(order)), on_lost_(std::move(lost))
	{
		reader_ = std::thread([this] { read_loop(); });
	}

	~DaemonClient() override
	{
		::shutdown(fd_, SHUT_RDWR);
		if (reader_.joinable())
			reader_.join();
		::close(fd_);
	}

	int hello(const gos_req_hello &req, gos_rep_hello &rep) override { return fixed(GOS_REQ_HELLO, req, rep); }
	int alloc(const gos_req_alloc &req, gos_rep_alloc &rep) override { return fixed(GOS_REQ_ALLOC, req, rep); }
	// Not waited for: a free cannot fail in a way the application could
	// act on, and requests are handled in order, so later ones see it.
	int free(std::uint64_t buffer) override
	{
		gos_req_buffer req{buffer};
		return post(GOS_REQ_FREE, &req, sizeof req);
	}
	int set_priority(const gos_req_priority &req) override
	{
		proto::Reply r;
		return call(GOS_REQ_SET_PRIORITY, &req, sizeof req, r);
	}
	int placement(std::uint64_t buffer, std::uint32_t first, std::uint32_t count,
		      std::vector<std::uint8_t> &states) override
	{
		gos_req_placement req{buffer, first, count};
		proto::Reply r;
		if (int err = call(GOS_REQ_PLACEMENT, &req, sizeof req, r))
			return err;
		if (r.body.size() != count)
			return fail(-EPROTO, "placement reply of the wrong size");
		states.assign(r.body.begin(), r.body.end());
		return 0;
	}
	// Pipelined: every acknowledgement is sent before the first reply is
	// awaited, so that a batch costs one round trip rather than one per
	// order (the daemon answers requests in order).
	std::vector<int> orders_done(const std::vector<gos_req_order_done> &acks) override
	{
		std::vector<std::uint32_t> seqs;
		for (const gos_req_order_done &a : acks)
			seqs.push_back(request(GOS_REQ_ORDER_DONE, &a, sizeof a));
		std::vector<int> results;
		for (std::uint32_t seq : seqs) {
			proto::Reply r;
			results.push_back(await(seq, r));
		}
		return results;
	}
	int meminfo(std::uint32_t gpu, gos_rep_meminfo &rep) override
	{
		gos_req_meminfo req{gpu, 0};
		return fixed(GOS_REQ_MEMINFO, req, rep);
	}
	int activity(std::uint32_t gpu, std::uint32_t launches) override
	{
		gos_req_activity req{gpu, launches};
		return post(GOS_REQ_ACTIVITY, &req, sizeof req);
	}
	int rank(const gos_req_rank &req) override
	{
		proto::Reply r;
		return call(GOS_REQ_RANK, &req, sizeof req, r);
	}
	int rank_report(const gos_rank_record *records, std::size_t count) override
	{
		for (std::size_t done = 0; done < count;) {
			auto n = static_cast<std::uint32_t>(std::min<std::size_t>(count - done, GOS_RANK_REPORT_MAX));
			gos_req_rank_report head{n, 0};
			std::vector<unsigned char> payload(sizeof head + n * sizeof *records);
			std::memcpy(payload.data(), &head, sizeof head);
			std::memcpy(payload.data() + sizeof head, records + done, n * sizeof *records);
			proto::Reply r;
			if (int err = call(GOS_REQ_RANK_REPORT, payload.data(), payload.size(), r))
				return err;
			done += n;
		}
		return 0;
	}
	std::string error() const override { return last_error; }
	void abandon() override
	{
		::close(fd_);
		fd_ = -1;
	}

private:
	static int fail(int err, std::string why)
	{
		last_error = std::move(why);
		return err;
	}

	template <class Req, class Rep>
	int fixed(std::uint16_t type, const Req &req, Rep &rep)
	{
		proto::Reply r;
		if (int err = call(type, &req, sizeof req, r))
			return err;
		if (r.body.size() != sizeof rep)
			return fail(-EPROTO, "reply of the wrong size from gpuoversubd");
		std::memcpy(&rep, r.body.data(), sizeof rep);
		return 0;
	}

	void send_frame(std::uint16_t type, std::uint32_t seq, const void *payload, std::size_t len)
	{
		proto::Bytes frame = proto::encode(type, seq, payload, len);
		std::lock_guard w(write_mu_);
		for (std::size_t off = 0; off < frame.size();) {
			ssize_t put = ::send(fd_, frame.data() + off, frame.size() - off, MSG_NOSIGNAL);
			if (put < 0 && errno == EINTR)
				continue;
			if (put <= 0) {
				::shutdown(fd_, SHUT_RDWR);	// the reader reports the loss
				return;
			}
			off += static_cast<std::size_t>(put);
		}
	}

	// A request whose reply nobody waits for; the reader drops it.
	int post(std::uint16_t type, const void *payload, std::size_t len)
	{
		std::unique_lock lk(mu_);
		if (dead_)
			return fail(-ENOTCONN, "the connection to gpuoversubd is closed");
		std::uint32_t seq = ++seq_;
		lk.unlock();
		send_frame(type, seq, payload, len);
		return 0;
	}

	int call(std::uint16_t type, const void *payload, std::size_t len, proto::Reply &out)
	{
		return await(request(type, payload, len), out);
	}

	// Sends a request whose reply await() collects: its sequence number, or
	// 0 when the connection is closed.
	std::uint32_t request(std::uint16_t type, const void *payload, std::size_t len)
	{
		std::unique_lock lk(mu_);
		if (dead_)
			return 0;
		std::uint32_t seq = ++seq_ ? seq_ : ++seq_;
		pending_[seq];
		lk.unlock();
		send_frame(type, seq, payload, len);
		return seq;
	}

	int await(std::uint32_t seq, proto::Reply &out)
	{
		if (!seq)
			return fail(-ENOTCONN, "the connection to gpuoversubd is closed");
		std::unique_lock lk(mu_);
		bool answered = cv_.wait_for(lk, std::chrono::milliseconds(settings().call_timeout_ms),
					     [&] { return dead_ || pending_[seq].has_value(); });
		std::optional<proto::Reply> rep = std::move(pending_[seq]);
		pending_.erase(seq);
		if (!rep) {
			if (!answered)	// a hung daemon: give up on it rather than block the application
				::shutdown(fd_, SHUT_RDWR);
			return fail(-ENOTCONN, !answered	   ? "gpuoversubd did not answer in time"
					       : refusal_.empty() ? "gpuoversubd closed the connection"
								  : "gpuoversubd closed the connection: " + refusal_);
		}
		out = std::move(*rep);
		if (out.status)
			return fail(out.status, out.error);
		return 0;
	}

	void read_loop()
	{
		proto::Decoder dec;
		std::uint8_t buf[65536];
		for (;;) {
			ssize_t got = ::read(fd_, buf, sizeof buf);
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0)
				break;
			dec.feed(buf, static_cast<std::size_t>(got));
			while (auto f = dec.next())
				deliver(*f);
			if (dec.failed())
				break;
		}
		{
			std::lock_guard lk(mu_);
			dead_ = true;
		}
		cv_.notify_all();
		on_lost_();
	}

	void deliver(const proto::Frame &f)
	{
		if (f.hdr.type == GOS_WIRE_ORDER) {
			gos_wire_order o;
			if (!proto::decode(f, o))
				on_order_(o);
			return;
		}
		auto rep = proto::decode_reply(f);
		std::lock_guard lk(mu_);
		// Sequence 0 answers no request: the daemon's reason for closing
		// (a protocol version it does not speak, too many connections),
		// said to whoever waits when the close comes.
		if (rep && f.hdr.seq == 0 && rep->status) {
			refusal_ = rep->error;
			return;
		}
		auto it = pending_.find(f.hdr.seq);
		if (rep && it != pending_.end())	// late replies to timed-out calls are dropped
			it->second = std::move(*rep);
		cv_.notify_all();
	}

	int fd_;
	OrderHandler on_order_;
	LostHandler on_lost_;
	std::mutex write_mu_;
	std::mutex mu_;
	std::condition_variable cv_;
	std::map<std::uint32_t, std::optional<proto::Reply>> pending_;
	std::uint32_t seq_ = 0;
	bool dead_ = false;
	std::string refusal_;	// the daemon's reason for closing, if it gave one
	std::thread reader_;
};

} // namespace

std::unique_ptr<EngineClient> connect_daemon(const std::string &path, EngineClient::OrderHandler order,
					     EngineClient::LostHandler lost)
{
	sockaddr_un addr{};
	addr.sun_family = AF_UNIX;
	if (path.size() >= sizeof addr.sun_path)
		throw std::runtime_error(path + ": socket path too long");
	std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
	int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
	if (::connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0) {
		int err = errno;
		::close(fd);
		throw std::runtime_error(path + ": " + std::strerror(err));
	}
	return std::make_unique<DaemonClient>(fd, std::move(order), std::move(lost));
}

} // namespace gos::agent
