#include "counted_client.hpp"

namespace gos::agent {
namespace {

thread_local RequestCount count;

// n requests sent, waited for or not.
int counted_call(int result, std::uint64_t n, bool waited)
{
	count.sent += n;
	count.waited += waited ? n : 0;
	return result;
}

class CountedClient final : public EngineClient {
public:
	explicit CountedClient(std::unique_ptr<EngineClient> inner) : inner_(std::move(inner)) {}

	int hello(const gos_req_hello &req, gos_rep_hello &rep) override
	{
		return counted_call(inner_->hello(req, rep), 1, true);
	}
	int alloc(const gos_req_alloc &req, gos_rep_alloc &rep) override
	{
		return counted_call(inner_->alloc(req, rep), 1, true);
	}
	int free(std::uint64_t buffer) override { return counted_call(inner_->free(buffer), 1, false); }
	int set_priority(const gos_req_priority &req) override
	{
		return counted_call(inner_->set_priority(req), 1, true);
	}
	int placement(std::uint64_t buffer, std::uint32_t first, std::uint32_t count_, std::vector<std::uint8_t> &states) override
	{
		return counted_call(inner_->placement(buffer, first, count_, states), 1, true);
	}
	std::vector<int> orders_done(const std::vector<gos_req_order_done> &acks) override
	{
		counted_call(0, acks.size(), true);
		return inner_->orders_done(acks);
	}
	int meminfo(std::uint32_t gpu, gos_rep_meminfo &rep) override
	{
		return counted_call(inner_->meminfo(gpu, rep), 1, true);
	}
	int activity(std::uint32_t gpu, std::uint32_t launches) override
	{
		return counted_call(inner_->activity(gpu, launches), 1, false);
	}
	int rank(const gos_req_rank &req) override { return counted_call(inner_->rank(req), 1, true); }
	int rank_report(const gos_rank_record *records, std::size_t n) override
	{
		return counted_call(inner_->rank_report(records, n), (n + GOS_RANK_REPORT_MAX - 1) / GOS_RANK_REPORT_MAX, true);
	}
	std::string error() const override { return inner_->error(); }
	void abandon() override { inner_->abandon(); }

private:
	std::unique_ptr<EngineClient> inner_;
};

} // namespace

RequestCount thread_requests()
{
	return count;
}

std::unique_ptr<EngineClient> counted(std::unique_ptr<EngineClient> inner)
{
	return std::make_unique<CountedClient>(std::move(inner));
}

} // namespace gos::agent
