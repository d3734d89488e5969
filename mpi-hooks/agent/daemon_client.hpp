// gpuoversubd's socket, as the agent uses it: the daemon's calls, and the
// engine's where the daemon hosts the engine. The common client
// (common/proto/client.hpp) with a reader thread of its own, which hands
// orders to the agent as they come.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "daemon_calls.hpp"
#include "engine_calls.hpp"

namespace gos::proto {
class Client;
}

namespace gos::agent {

class DaemonClient final : public DaemonCalls, public EngineCalls {
public:
	using LostHandler = std::function<void()>;

	// Orders arrive on the client's thread; lost() runs once when the
	// connection drops. Throws std::runtime_error with the reason when
	// the socket cannot be reached.
	DaemonClient(const std::string &socket, OrderHandler order, LostHandler lost);
	~DaemonClient() override;

	// Where the engine is gpuoversub.ko, the buffers live in the module and
	// a daemon restart loses nothing: from now on a call that finds the
	// daemon gone connects anew, says `hello` again and is retried once.
	// Before the client is shared with other threads.
	void rejoin_after_restarts(const gos_req_hello &hello);

	int hello(const gos_req_hello &req, gos_rep_hello &rep) override;
	int alloc(const gos_req_alloc &req, gos_rep_alloc &rep) override;
	int free(std::uint64_t buffer) override;
	int set_priority(const gos_req_priority &req) override;
	int placement(std::uint64_t buffer, std::uint32_t first, std::uint32_t count,
		      std::vector<std::uint8_t> &states) override;
	std::vector<int> orders_done(const std::vector<gos_req_order_done> &acks) override;
	int meminfo(std::uint32_t gpu, gos_rep_meminfo &rep) override;
	int activity(std::uint32_t gpu, std::uint32_t launches) override;
	int rank(const gos_req_rank &req) override;
	int rank_report(const gos_rank_record *records, std::size_t count) override;
	std::string error() const override;
	void abandon() override;

private:
	template <class Call>
	int on_daemon(Call call);
	std::shared_ptr<proto::Client> connection();

	std::string socket_;
	std::optional<gos_req_hello> rejoin_;	// set once, before other threads call
	std::mutex mu_;				// replacing daemon_ after a restart
	std::shared_ptr<proto::Client> daemon_;
};

} // namespace gos::agent
