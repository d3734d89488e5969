// DaemonClient: here only the calls' translation into 0 or -errno, for no
// exception leaves this file towards the hooks; the count of the frames
// each call sends (request_count.hpp); and, in kernel mode, the connection
// made anew after a daemon restart.
#include "daemon_client.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "common/proto/client.hpp"
#include "request_count.hpp"
#include "settings.hpp"

namespace gos::agent {
namespace {

thread_local std::string last_error;
thread_local RequestCount requests;

int fail(int err, std::string why)
{
	last_error = std::move(why);
	return err;
}

// n request frames sent, waited for or not: counted whether they fail or not.
void sending(std::uint64_t n, bool waited)
{
	requests.sent += n;
	requests.waited += waited ? n : 0;
}

// The connection's failures as -errno: the hooks take no exception.
template <class Call>
int guarded(Call call)
{
	try {
		return call();
	} catch (const proto::ProtocolError &e) {
		return fail(-e.code(), e.what());
	} catch (const std::exception &e) {
		return fail(-EIO, e.what());
	}
}

int status(const proto::Reply &r)
{
	return r.status ? fail(r.status, r.error) : 0;
}

template <class T>
int value(const proto::Typed<T> &r, T &out)
{
	if (!r.status)
		out = r.value;
	return status(r);
}

std::shared_ptr<proto::Client> connect(const std::string &path, proto::Client::Reader reader)
{
	try {
		return std::make_shared<proto::Client>(
			path, proto::Client::Options{proto::Client::Path::as_given, settings().call_timeout_ms, std::move(reader)});
	} catch (const proto::ProtocolError &e) {	// the agent says "cannot reach gpuoversubd" itself
		throw std::runtime_error(path + ": " + std::strerror(e.code()));
	}
}

} // namespace

RequestCount thread_requests()
{
	return requests;
}

DaemonClient::DaemonClient(const std::string &socket, OrderHandler order, LostHandler lost)
	: socket_(socket), daemon_(connect(socket, {std::move(order), std::move(lost)}))
{
}

DaemonClient::~DaemonClient() = default;

void DaemonClient::rejoin_after_restarts(const gos_req_hello &hello)
{
	rejoin_ = hello;
}

std::shared_ptr<proto::Client> DaemonClient::connection()
{
	if (!rejoin_)
		return daemon_;	// never replaced
	std::lock_guard g(mu_);
	return daemon_;
}

// A call on gpuoversubd; in kernel mode, a daemon that restarted is
// connected to anew (once, by whichever call finds it gone first).
template <class Call>
int DaemonClient::on_daemon(Call call)
{
	std::shared_ptr<proto::Client> daemon = connection();
	int err = guarded([&] { return call(*daemon); });
	if (err != -ENOTCONN || !rejoin_)
		return err;
	std::lock_guard g(mu_);
	if (daemon_ == daemon) {
		std::string why = last_error;
		try {
			auto fresh = connect(socket_, {[](const gos_wire_order &) {}, [] {}});
			gos_rep_hello rep{};
			if (int herr = guarded([&] { return value(fresh->hello(*rejoin_), rep); }))
				return fail(herr, "gpuoversubd: " + last_error);
			daemon_ = std::move(fresh);
		} catch (const std::exception &e) {
			return fail(-ENOTCONN, why + "; reconnecting: " + e.what());
		}
	}
	return guarded([&] { return call(*daemon_); });
}

int DaemonClient::hello(const gos_req_hello &req, gos_rep_hello &rep)
{
	sending(1, true);
	return on_daemon([&](proto::Client &d) { return value(d.hello(req), rep); });
}

int DaemonClient::alloc(const gos_req_alloc &req, gos_rep_alloc &rep)
{
	sending(1, true);
	return on_daemon([&](proto::Client &d) { return value(d.alloc(req), rep); });
}

// Not waited for: a free cannot fail in a way the application could act
// on, and requests are handled in order, so later ones see it.
int DaemonClient::free(std::uint64_t buffer)
{
	gos_req_buffer req{buffer};
	sending(1, false);
	return on_daemon([&](proto::Client &d) { return d.post<GOS_REQ_FREE>(req), 0; });
}

int DaemonClient::set_priority(const gos_req_priority &req)
{
	sending(1, true);
	return on_daemon([&](proto::Client &d) { return status(d.set_priority(req)); });
}

int DaemonClient::placement(std::uint64_t buffer, std::uint32_t first, std::uint32_t count,
			    std::vector<std::uint8_t> &states)
{
	sending(1, true);
	return on_daemon([&](proto::Client &d) {
		proto::Reply r = d.placement(gos_req_placement{buffer, first, count});
		if (r.status)
			return status(r);
		if (r.body.size() != count)
			return fail(-EPROTO, "placement reply of the wrong size");
		states.assign(r.body.begin(), r.body.end());
		return 0;
	});
}

// Pipelined: every acknowledgement is sent before the first reply is
// awaited, so that a batch costs one round trip rather than one per order
// (the daemon answers requests in order).
std::vector<int> DaemonClient::orders_done(const std::vector<gos_req_order_done> &acks)
{
	sending(acks.size(), true);
	std::vector<int> results;
	int lost = on_daemon([&](proto::Client &d) {
		std::vector<std::uint32_t> seqs;
		results.clear();
		for (const gos_req_order_done &a : acks)
			seqs.push_back(d.send<GOS_REQ_ORDER_DONE>(a));
		for (std::uint32_t seq : seqs)
			results.push_back(status(d.await(seq)));
		return 0;
	});
	results.resize(acks.size(), lost);
	return results;
}

int DaemonClient::meminfo(std::uint32_t gpu, gos_rep_meminfo &rep)
{
	sending(1, true);
	return on_daemon([&](proto::Client &d) { return value(d.meminfo(gos_req_meminfo{gpu, 0}), rep); });
}

int DaemonClient::activity(std::uint32_t gpu, std::uint32_t launches)
{
	gos_req_activity req{gpu, launches};
	sending(1, false);
	return on_daemon([&](proto::Client &d) { return d.post<GOS_REQ_ACTIVITY>(req), 0; });
}

int DaemonClient::rank(const gos_req_rank &req)
{
	sending(1, true);
	return on_daemon([&](proto::Client &d) { return status(d.rank(req)); });
}

int DaemonClient::rank_report(const gos_rank_record *records, std::size_t count)
{
	sending((count + GOS_RANK_REPORT_MAX - 1) / GOS_RANK_REPORT_MAX, true);
	return on_daemon([&](proto::Client &d) {
		for (std::size_t done = 0; done < count;) {
			auto n = static_cast<std::uint32_t>(std::min<std::size_t>(count - done, GOS_RANK_REPORT_MAX));
			if (int err = status(d.rank_report(gos_req_rank_report{n, 0}, records + done, n)))
				return err;
			done += n;
		}
		return 0;
	});
}

std::string DaemonClient::error() const
{
	return last_error;
}

// In a forked child, which has one thread: no lock (another thread of the
// parent may have held one at the fork).
void DaemonClient::abandon()
{
	daemon_->abandon();
}

} // namespace gos::agent
