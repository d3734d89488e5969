#include "daemon/gpud/jobwide_outbox.hpp"

#include <algorithm>
#include <utility>

namespace gos::gpud {

JobwideOutbox::JobwideOutbox(OutboxSettings settings, Random random)
	: settings_(settings), random_(std::move(random))
{
}

bool JobwideOutbox::add(Outgoing part, Clock::time_point now)
{
	if (parts_.size() >= settings_.max_parts)
		return false;
	Held h{next_id_++, std::move(part), now, {}, {}};
	h.writer.next = now;
	h.successor.next = now + settings_.failover_after;
	parts_.push_back(std::move(h));
	return true;
}

bool JobwideOutbox::wants(const Held &h, Target t, Clock::time_point now) const
{
	const Way &w = t == Target::writer ? h.writer : h.successor;
	if (w.in_flight || w.taken || w.refused || now < w.next)
		return false;
	return t == Target::writer || !h.part.successor.empty();
}

void JobwideOutbox::back_off(Way &w, Clock::time_point now)
{
	w.backoff = w.backoff.count() ? std::min(w.backoff * 2, settings_.backoff_max) : settings_.backoff_min;
	auto drawn = std::chrono::duration_cast<Clock::duration>(w.backoff * (0.5 + 0.5 * random_()));
	w.next = std::max(w.next, now + drawn);
}

void JobwideOutbox::end(std::list<Held>::iterator it, bool delivered, std::string why)
{
	ended_.push_back({std::move(it->part), delivered, std::move(why)});
	parts_.erase(it);
}

std::vector<JobwideOutbox::Try> JobwideOutbox::due(Clock::time_point now)
{
	std::vector<Try> out;
	for (auto it = parts_.begin(); it != parts_.end();) {
		Held &h = *it;
		if (now >= h.added + settings_.send_for) {
			// No new try; one in flight is waited for, its answer may end it.
			auto next = std::next(it);
			if (!h.writer.in_flight && !h.successor.in_flight)
				end(it, h.successor.taken, h.successor.taken ? "the writer did not take it; the successor did"
									     : "no writer took it in jobwide.send_for");
			it = next;
			continue;
		}
		for (Target t : {Target::writer, Target::successor})
			if (wants(h, t, now)) {
				way(h, t).in_flight = true;
				out.push_back({h.id, t, t == Target::writer ? &h.part.writer : &h.part.successor, &h.part.frame,
					       &h.part});
			}
		++it;
	}
	return out;
}

void JobwideOutbox::heard(std::uint64_t id, Target target, Heard what, std::string_view why, Clock::time_point now)
{
	auto it = std::find_if(parts_.begin(), parts_.end(), [&](const Held &h) { return h.id == id; });
	if (it == parts_.end())
		return;
	Way &w = way(*it, target);
	w.in_flight = false;
	switch (what) {
	case Heard::taken:
		w.taken = true;
		if (target == Target::writer) {
			end(it, true, "");
			return;
		}
		break;
	case Heard::busy:
		back_off(w, now);
		break;
	case Heard::refused:
		w.refused = true;
		w.refusal = why;
		break;
	}
	// A writer's refusal is final: the successor writes only for a writer
	// that is down, and this one answered.
	if (it->writer.refused && !it->successor.in_flight)
		end(it, it->successor.taken, "the writer refused it: " + it->writer.refusal);
}

std::vector<Ended> JobwideOutbox::ended()
{
	return std::exchange(ended_, {});
}

std::optional<JobwideOutbox::Clock::time_point> JobwideOutbox::next_due(Clock::time_point now) const
{
	std::optional<Clock::time_point> next;
	auto sooner = [&](Clock::time_point t) {
		if (!next || t < *next)
			next = t;
	};
	for (const Held &h : parts_) {
		// Past send_for with a try in flight, due() waits for the try's
		// answer: a time here would spin the caller's timer.
		if (h.writer.in_flight || h.successor.in_flight) {
			if (now >= h.added + settings_.send_for)
				continue;
		} else
			sooner(h.added + settings_.send_for);
		if (!h.writer.taken && !h.writer.refused && !h.writer.in_flight)
			sooner(h.writer.next);
		if (!h.part.successor.empty() && !h.successor.taken && !h.successor.refused && !h.successor.in_flight)
			sooner(h.successor.next);
	}
	return next;
}

} // namespace gos::gpud
