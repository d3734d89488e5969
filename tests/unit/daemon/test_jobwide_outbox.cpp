// The parts a node sends: to the writer at once, to the successor after
// failover_after, again after a doubling jittered backoff when busy, never
// again after a refusal, and given up after send_for.
#define BOOST_TEST_MODULE jobwide_outbox
#include <boost/test/unit_test.hpp>

#include <chrono>

#include "daemon/gpud/jobwide_outbox.hpp"

using namespace gos::gpud;
using namespace std::chrono_literals;
using Clock = JobwideOutbox::Clock;

namespace {

Outgoing part(std::uint64_t job, std::string successor = "n2")
{
	return {job, 100, "n1", std::move(successor), "frame-" + std::to_string(job), "n3"};
}

// Jitter at its top: each backoff is the whole doubling.
JobwideOutbox outbox(OutboxSettings s = {}, double draw = 0.999999)
{
	return JobwideOutbox(s, [draw] { return draw; });
}

} // namespace

BOOST_AUTO_TEST_CASE(a_part_goes_to_its_writer_at_once_and_ends_when_taken)
{
	JobwideOutbox box = outbox();
	auto t = Clock::now();
	box.add(part(1), t);
	auto tries = box.due(t);
	BOOST_TEST(tries.size() == 1u);
	BOOST_TEST(*tries[0].node == "n1");
	BOOST_TEST(*tries[0].frame == "frame-1");
	BOOST_TEST(box.due(t).empty());	// in flight: not twice
	box.heard(tries[0].id, Target::writer, Heard::taken, "", t);
	auto ended = box.ended();
	BOOST_TEST(ended.size() == 1u);
	BOOST_TEST(ended[0].delivered);
	BOOST_TEST(box.held() == 0u);
	BOOST_TEST(!box.next_due(t));
}

BOOST_AUTO_TEST_CASE(a_busy_writer_is_tried_again_after_a_doubling_backoff_up_to_its_cap)
{
	JobwideOutbox box = outbox({.backoff_min = 1000ms, .backoff_max = 4000ms});
	auto t = Clock::now();
	box.add(part(1, ""), t);
	std::vector<Clock::duration> waits;
	auto now = t;
	for (int i = 0; i < 5; i++) {
		auto tries = box.due(now);
		BOOST_TEST_REQUIRE(tries.size() == 1u);
		box.heard(tries[0].id, Target::writer, Heard::busy, "", now);
		auto next = *box.next_due(now);
		BOOST_TEST(box.due(next - 1ms).empty());
		waits.push_back(next - now);
		now = next;
	}
	auto s = [](Clock::duration d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); };
	BOOST_TEST(s(waits[0]) == 999);
	BOOST_TEST(s(waits[1]) == 1999);
	BOOST_TEST(s(waits[2]) == 3999);
	BOOST_TEST(s(waits[3]) == 3999);	// capped
}

BOOST_AUTO_TEST_CASE(the_jitter_draws_from_the_upper_half)
{
	JobwideOutbox low = outbox({}, 0.0);
	auto t = Clock::now();
	low.add(part(1, ""), t);
	low.heard(low.due(t)[0].id, Target::writer, Heard::busy, "", t);
	BOOST_TEST(std::chrono::duration_cast<std::chrono::milliseconds>(*low.next_due(t) - t).count() == 500);
}

BOOST_AUTO_TEST_CASE(the_successor_gets_a_copy_after_failover_after)
{
	JobwideOutbox box = outbox({.failover_after = 60s});
	auto t = Clock::now();
	box.add(part(1), t);
	auto first = box.due(t);
	box.heard(first[0].id, Target::writer, Heard::busy, "", t);
	BOOST_TEST(box.due(t + 59s).size() == 1u);	// the writer again, not yet the successor
	auto both = box.due(t + 60s);
	BOOST_TEST(both.size() == 1u);
	BOOST_TEST(*both[0].node == "n2");
	box.heard(both[0].id, Target::successor, Heard::taken, "", t + 60s);
	BOOST_TEST(box.held() == 1u);	// the writer still wants it
	BOOST_TEST(box.ended().empty());
}

BOOST_AUTO_TEST_CASE(a_refusal_ends_the_sending_and_send_for_gives_up)
{
	JobwideOutbox box = outbox({.failover_after = 60s, .send_for = 600s});
	auto t = Clock::now();
	box.add(part(1), t);
	box.add(part(2), t);
	box.add(part(3), t);
	auto tries = box.due(t);
	BOOST_TEST(tries.size() == 3u);
	box.heard(tries[0].id, Target::writer, Heard::refused, "not_member", t);
	auto ended = box.ended();
	BOOST_TEST(ended.size() == 1u);
	BOOST_TEST(!ended[0].delivered);
	BOOST_TEST(ended[0].why == "the writer refused it: not_member");
	box.heard(tries[1].id, Target::writer, Heard::busy, "", t);
	box.heard(tries[2].id, Target::writer, Heard::busy, "", t);
	// Job 3's successor takes a copy; job 2's refuses.
	for (const auto &x : box.due(t + 60s))
		if (x.target == Target::successor)
			box.heard(x.id, x.target, x.id == tries[1].id ? Heard::refused : Heard::taken, "busy_address", t + 60s);
		else
			box.heard(x.id, x.target, Heard::busy, "", t + 60s);
	auto last = box.due(t + 599s);
	BOOST_TEST(last.size() == 2u);	// each writer once more; no refused successor
	for (const auto &x : last)
		box.heard(x.id, x.target, Heard::busy, "", t + 599s);
	box.due(t + 600s);
	ended = box.ended();
	BOOST_TEST_REQUIRE(ended.size() == 2u);
	BOOST_TEST(ended[0].why == "no writer took it in jobwide.send_for");
	BOOST_TEST(!ended[0].delivered);
	BOOST_TEST(ended[1].delivered);	// the successor has it
	BOOST_TEST(box.held() == 0u);
}

BOOST_AUTO_TEST_CASE(the_outbox_holds_a_bounded_number_of_parts)
{
	JobwideOutbox box = outbox({.max_parts = 2});
	auto t = Clock::now();
	BOOST_TEST(box.add(part(1), t));
	BOOST_TEST(box.add(part(2), t));
	BOOST_TEST(!box.add(part(3), t));
	BOOST_TEST(box.held() == 2u);
	box.heard(12345, Target::writer, Heard::taken, "", t);	// an unknown try: nothing
	BOOST_TEST(box.held() == 2u);
}

BOOST_AUTO_TEST_CASE(past_send_for_a_try_in_flight_is_waited_for_and_no_new_one_made)
{
	JobwideOutbox box = outbox({.failover_after = 60s, .send_for = 600s});
	auto t = Clock::now();
	box.add(part(1), t);
	auto tries = box.due(t);
	BOOST_TEST_REQUIRE(tries.size() == 1u);
	// Past send_for, the writer's try still out: no time to wake for (no
	// spin), no try to the successor, nothing ended yet.
	BOOST_TEST(!box.next_due(t + 601s));
	BOOST_TEST(box.due(t + 601s).empty());
	BOOST_TEST(box.ended().empty());
	box.heard(tries[0].id, Target::writer, Heard::busy, "", t + 602s);
	BOOST_TEST(box.due(t + 602s).empty());
	auto ended = box.ended();
	BOOST_TEST_REQUIRE(ended.size() == 1u);
	BOOST_TEST(!ended[0].delivered);
}
