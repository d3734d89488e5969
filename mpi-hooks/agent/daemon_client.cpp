// EngineClient over gpuoversubd's socket: the common client
// (common/proto/client.hpp) with a reader thread of its own, which hands
// orders to the agent as they come. Here only the calls' translation into
// 0 or -errno, for no exception leaves this file towards the hooks, and
// the count of the frames each call sends (request_count.hpp).
#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "engine_client.hpp"
#include "common/proto/client.hpp"
#include "request_count.hpp"
#include "settings.hpp"

namespace gos::agent {
namespace {

thread_local std::string last_error;
thread_local RequestCount requests;

// n request frames sent, waited for or not: counted whether they fail or not.
void sending(std::uint64_t n, bool waited)
{
	requests.sent += n;
	requests.waited += waited ? n : 0;
}

int fail(int err, std::string why)
{
	last_error = std::move(why);
	return err;
}

class DaemonClient final : public EngineClient {
public:
	DaemonClient(const std::string &path, OrderHandler order, LostHandler lost)
		: daemon_(path, {proto::Client::Path::as_given, settings().call_timeout_ms,
				 proto::Client::Reader{std::move(order), std::move(lost)}})
	{
	}

	int hello(const gos_req_hello &req, gos_rep_hello &rep) override
	{
		sending(1, true);
		return guarded([&] { return value(daemon_.hello(req), rep); });
	}
	int alloc(const gos_req_alloc &req, gos_rep_alloc &rep) override
	{
		sending(1, true);
		return guarded([&] { return value(daemon_.alloc(req), rep); });
	}
	// Not waited for: a free cannot fail in a way the application could
	// act on, and requests are handled in order, so later ones see it.
	int free(std::uint64_t buffer) override
	{
		gos_req_buffer req{buffer};
		sending(1, false);
		return guarded([&] { return daemon_.post<GOS_REQ_FREE>(req), 0; });
	}
	int set_priority(const gos_req_priority &req) override
	{
		sending(1, true);
		return guarded([&] { return status(daemon_.set_priority(req)); });
	}
	int placement(std::uint64_t buffer, std::uint32_t first, std::uint32_t count,
		      std::vector<std::uint8_t> &states) override
	{
		sending(1, true);
		return guarded([&] {
			proto::Reply r = daemon_.placement(gos_req_placement{buffer, first, count});
			if (r.status)
				return status(r);
			if (r.body.size() != count)
				return fail(-EPROTO, "placement reply of the wrong size");
			states.assign(r.body.begin(), r.body.end());
			return 0;
		});
	}
	// Pipelined: every acknowledgement is sent before the first reply is
	// awaited, so that a batch costs one round trip rather than one per
	// order (the daemon answers requests in order).
	std::vector<int> orders_done(const std::vector<gos_req_order_done> &acks) override
	{
		sending(acks.size(), true);
		std::vector<int> results;
		std::vector<std::uint32_t> seqs;
		int lost = guarded([&] {
			for (const gos_req_order_done &a : acks)
				seqs.push_back(daemon_.send<GOS_REQ_ORDER_DONE>(a));
			for (std::uint32_t seq : seqs)
				results.push_back(status(daemon_.await(seq)));
			return 0;
		});
		results.resize(acks.size(), lost);
		return results;
	}
	int meminfo(std::uint32_t gpu, gos_rep_meminfo &rep) override
	{
		sending(1, true);
		return guarded([&] { return value(daemon_.meminfo(gos_req_meminfo{gpu, 0}), rep); });
	}
	int activity(std::uint32_t gpu, std::uint32_t launches) override
	{
		gos_req_activity req{gpu, launches};
		sending(1, false);
		return guarded([&] { return daemon_.post<GOS_REQ_ACTIVITY>(req), 0; });
	}
	int rank(const gos_req_rank &req) override
	{
		sending(1, true);
		return guarded([&] { return status(daemon_.rank(req)); });
	}
	int rank_report(const gos_rank_record *records, std::size_t count) override
	{
		sending((count + GOS_RANK_REPORT_MAX - 1) / GOS_RANK_REPORT_MAX, true);
		return guarded([&] {
			for (std::size_t done = 0; done < count;) {
				auto n = static_cast<std::uint32_t>(std::min<std::size_t>(count - done, GOS_RANK_REPORT_MAX));
				if (int err = status(daemon_.rank_report(gos_req_rank_report{n, 0}, records + done, n)))
					return err;
				done += n;
			}
			return 0;
		});
	}
	std::string error() const override { return last_error; }
	void abandon() override { daemon_.abandon(); }

private:
	// The connection's failures as -errno: the hooks take no exception.
	template <class Call>
	static int guarded(Call call)
	{
		try {
			return call();
		} catch (const proto::ProtocolError &e) {
			return fail(-e.code(), e.what());
		} catch (const std::exception &e) {
			return fail(-EIO, e.what());
		}
	}
	static int status(const proto::Reply &r) { return r.status ? fail(r.status, r.error) : 0; }
	template <class T>
	static int value(const proto::Typed<T> &r, T &out)
	{
		if (!r.status)
			out = r.value;
		return status(r);
	}

	proto::Client daemon_;
};

} // namespace

RequestCount thread_requests()
{
	return requests;
}

std::unique_ptr<EngineClient> connect_daemon(const std::string &path, EngineClient::OrderHandler order,
					     EngineClient::LostHandler lost)
{
	try {
		return std::make_unique<DaemonClient>(path, std::move(order), std::move(lost));
	} catch (const proto::ProtocolError &e) {	// the agent says "cannot reach gpuoversubd" itself
		throw std::runtime_error(path + ": " + std::strerror(e.code()));
	}
}

} // namespace gos::agent
