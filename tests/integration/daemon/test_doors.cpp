// Issue 31, "one bound, every door": each request of the table
// (requests.def) whose row says it grows a job's state under a cap ("at
// most max_...") has a door here. On a real gpuoversubd with small caps,
// a door takes the largest legal input, each request of it accepted, and
// then one more, which must be refused with the cap's errno, and the job
// then holds exactly the cap. A row that names a cap without a door
// here fails the first case, so a new growing request cannot go untested.
#define BOOST_TEST_MODULE doors
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <cerrno>
#include <functional>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/proto/client.hpp"
#include "tests/integration/daemon/daemon_harness.hpp"

using namespace gos_test;
using gos::proto::Client;

namespace {

constexpr int agents_cap = 4, ranks_cap = 3, buffers_cap = 5;
const std::string caps = "max_agents_per_job: 4\nmax_ranks_per_job: 3\nmax_buffers_per_job: 5\n";

// What one past the cap got, and how much the job held after it (while
// the door's connections were still open).
struct Outcome {
	int status;
	std::size_t held;
};

struct Door {
	std::string request, cap;	// as requests.def names them
	int cap_value, refusal;		// the daemon's setting; the errno past it
	// Sends the largest legal input to job, checking each request was
	// accepted, then one more.
	std::function<Outcome(DaemonUnderTest &, std::uint64_t job)> past_the_cap;
};

gos_req_hello hello_as(int rank)
{
	gos_req_hello h{};
	h.pid = static_cast<__u32>(getpid());
	h.rank = rank;
	h.local_rank = rank < 0 ? -1 : 0;
	h.world_size = rank < 0 ? 0 : 1000;
	return h;
}

// A connection of this process that said hello as rank, for its job.
std::unique_ptr<Client> agent(DaemonUnderTest &d, int rank)
{
	auto c = std::make_unique<Client>(d.socket);
	auto rep = c->hello(hello_as(rank));
	BOOST_REQUIRE_MESSAGE(rep.status == 0, "hello as rank " << rank << ": " << rep.error);
	return c;
}

gos_req_rank rank_as(int rank)
{
	gos_req_rank r{};
	r.rank = rank;
	r.world_size = 1000;
	std::snprintf(r.node, sizeof r.node, "node%d", rank);
	return r;
}

gos_rank_record record_of(int rank)
{
	gos_rank_record r{};
	r.rank = rank;
	r.pid = static_cast<__u32>(getpid());
	std::snprintf(r.node, sizeof r.node, "node%d", rank);
	return r;
}

std::size_t listed(DaemonUnderTest &d, std::uint64_t job, const char *list)
{
	return d.ask(GOS_REQ_REPORT, &job, sizeof job).at(list).size();
}

std::size_t of_tenant(DaemonUnderTest &d, std::uint64_t job, const char *counter)
{
	return d.tenant(job).at(counter).get<std::size_t>();
}

const std::vector<Door> &doors()
{
	static const std::vector<Door> all = {
		{"hello", "max_agents_per_job", agents_cap, EUSERS,
		 [](DaemonUnderTest &d, std::uint64_t) {
			 std::vector<std::unique_ptr<Client>> held;
			 for (int i = 0; i < agents_cap; i++)
				 held.push_back(agent(d, -1));
			 Client one_more(d.socket);
			 int status = one_more.hello(hello_as(-1)).status;
			 return Outcome{status, d.status().at("agents").get<std::size_t>()};	// the first door: no others
		 }},
		{"hello", "max_ranks_per_job", ranks_cap, E2BIG,
		 [](DaemonUnderTest &d, std::uint64_t job) {
			 std::vector<std::unique_ptr<Client>> held;
			 for (int i = 0; i < ranks_cap; i++)
				 held.push_back(agent(d, i));
			 Client one_more(d.socket);
			 return Outcome{one_more.hello(hello_as(ranks_cap)).status, listed(d, job, "ranks")};
		 }},
		{"rank", "max_ranks_per_job", ranks_cap, E2BIG,
		 [](DaemonUnderTest &d, std::uint64_t job) {
			 auto c = agent(d, 0);
			 for (int i = 1; i < ranks_cap; i++) {
				 auto rep = c->rank(rank_as(i));
				 BOOST_REQUIRE_MESSAGE(rep.status == 0, "rank " << i << ": " << rep.error);
			 }
			 return Outcome{c->rank(rank_as(ranks_cap)).status, listed(d, job, "ranks")};
		 }},
		{"rank_report", "max_ranks_per_job", ranks_cap, E2BIG,
		 [](DaemonUnderTest &d, std::uint64_t job) {
			 auto c = agent(d, 0);
			 std::vector<gos_rank_record> records;
			 for (int i = 0; i < ranks_cap; i++)
				 records.push_back(record_of(i));
			 gos_req_rank_report head{static_cast<__u32>(records.size()), 0};
			 auto rep = c->rank_report(head, records.data(), records.size());
			 BOOST_REQUIRE_MESSAGE(rep.status == 0, "a report of " << ranks_cap << " ranks: " << rep.error);
			 gos_rank_record extra = record_of(ranks_cap);
			 head.count = 1;
			 int status = c->rank_report(head, &extra, std::size_t(1)).status;
			 return Outcome{status, listed(d, job, "mpi_ranks")};
		 }},
		{"alloc", "max_buffers_per_job", buffers_cap, ENOBUFS,
		 [](DaemonUnderTest &d, std::uint64_t job) {
			 auto c = agent(d, 0);
			 gos_req_alloc a{};
			 a.priority = 8;
			 a.size = 1 << 20;
			 for (int i = 0; i < buffers_cap; i++) {
				 auto rep = c->alloc(a);
				 BOOST_REQUIRE_MESSAGE(rep.status == 0, "buffer " << i << ": " << rep.error);
			 }
			 return Outcome{c->alloc(a).status, of_tenant(d, job, "buffers")};
		 }},
	};
	return all;
}

// The (request, cap) pairs the table names: "at most max_..." in a row's cost.
std::set<std::pair<std::string, std::string>> capped_rows()
{
	std::set<std::pair<std::string, std::string>> rows;
	static const std::regex at_most(R"(at most (max_[a-z_]+))");
	for (const auto &row : gos::proto::request_table()) {
		std::string cost(row.cost);
		for (std::sregex_iterator m(cost.begin(), cost.end(), at_most), end; m != end; ++m)
			rows.emplace(std::string(row.name), (*m)[1].str());
	}
	return rows;
}

} // namespace

BOOST_AUTO_TEST_CASE(every_capped_request_of_the_table_has_a_door_here)
{
	std::set<std::pair<std::string, std::string>> tested;
	for (const auto &door : doors())
		tested.emplace(door.request, door.cap);
	auto rows = capped_rows();
	for (const auto &[request, cap] : rows)
		BOOST_CHECK_MESSAGE(tested.count({request, cap}), request << " grows under " << cap << ", untested here");
	for (const auto &[request, cap] : tested)
		BOOST_CHECK_MESSAGE(rows.count({request, cap}), request << "'s row in requests.def does not name " << cap);
}

BOOST_AUTO_TEST_CASE(the_largest_legal_input_is_taken_and_one_more_refused_at_every_door)
{
	DaemonUnderTest d(caps);
	std::uint64_t job = 3100;
	for (const auto &door : doors()) {
		BOOST_TEST_CONTEXT(door.request << " under " << door.cap)
		{
			job++;
			d.register_step(job);
			d.register_task(job, getpid());
			Outcome o = door.past_the_cap(d, job);
			BOOST_CHECK_EQUAL(o.status, -door.refusal);
			BOOST_CHECK_EQUAL(o.held, std::size_t(door.cap_value));
			gos_req_job end{job};	// which unbinds this process from it
			BOOST_REQUIRE_EQUAL(d.request(GOS_REQ_JOB_END, &end, sizeof end), 0);
		}
	}
	BOOST_TEST_MESSAGE(d.log());
}

// A hello refused at a later door (its rank past the cap) gives back the
// agent slot it took: the job can still connect as many agents as the cap.
BOOST_AUTO_TEST_CASE(a_hello_refused_for_its_rank_keeps_no_agent_slot)
{
	DaemonUnderTest d(caps);
	std::uint64_t job = 3200;
	d.register_step(job);
	d.register_task(job, getpid());
	std::vector<std::unique_ptr<Client>> held;
	for (int i = 0; i < ranks_cap; i++)
		held.push_back(agent(d, i));
	for (int i = 0; i < 3; i++) {
		Client refused(d.socket);
		BOOST_CHECK_EQUAL(refused.hello(hello_as(ranks_cap + i)).status, -E2BIG);
	}
	BOOST_CHECK_EQUAL(d.status().at("agents").get<std::size_t>(), std::size_t(ranks_cap));
	while (held.size() < std::size_t(agents_cap))
		held.push_back(agent(d, 0));	// a rank it lists already
	Client one_more(d.socket);
	BOOST_CHECK_EQUAL(one_more.hello(hello_as(0)).status, -EUSERS);
	BOOST_TEST_MESSAGE(d.log());
}
