// The parts this node has to send, and when (docs/jobwide.md, "The
// channel" and "Failures"): each goes to its run's writer, and, when the
// writer has not taken it after failover_after, to the successor too.
// A target that is busy or cannot be reached is tried again after a
// backoff that doubles from 1 s to at most 60 s, drawn at random from its
// upper half so that a cluster's senders spread; a refusal ends the
// sending to that target; after send_for the part is given up. The
// sockets are the caller's: this only says which target is due when.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gos::gpud {

struct OutboxSettings {
	std::chrono::seconds failover_after{60};	// jobwide.failover_after
	std::chrono::seconds send_for{600};		// jobwide.send_for
	std::chrono::milliseconds backoff_min{1000}, backoff_max{60000};
	std::size_t max_parts = 1024;	// held at once
};

// One part to send: the frame, whole, and where.
struct Outgoing {
	std::uint64_t job = 0;
	std::int64_t start = 0;
	std::string writer, successor;	// node names; no successor for a one-node run
	std::string frame;
	std::string node;	// this node, the part's: a sealed answer names it
};

enum class Target { writer, successor };

// What a try heard.
enum class Heard {
	taken,		// ok or dup: the target has it
	busy,		// busy, or no connection, or no answer: try again later
	refused,	// refused REASON: never again to this target
};

// The end of a part's sending, for the log.
struct Ended {
	Outgoing part;
	bool delivered = false;	// a target took it
	std::string why;	// when not: the refusals, or the time given
};

class JobwideOutbox {
public:
	using Clock = std::chrono::steady_clock;
	// A draw from [0, 1), for the backoff's jitter.
	using Random = std::function<double()>;

	JobwideOutbox(OutboxSettings settings, Random random);
	// A reload: the parts held follow SETTINGS from their next try on.
	void configure(const OutboxSettings &settings) { settings_ = settings; }

	// False (and nothing held) when max_parts are held already.
	bool add(Outgoing part, Clock::time_point now);

	struct Try {
		std::uint64_t id;	// for heard()
		Target target;
		const std::string *node;	// valid until heard() for this try
		const std::string *frame;
		const Outgoing *part;	// as long: its run and node, which an answer names
	};
	// The tries due now; each is in flight until heard() is told.
	std::vector<Try> due(Clock::time_point now);
	void heard(std::uint64_t id, Target target, Heard what, std::string_view why, Clock::time_point now);
	// Parts whose sending ended since the last call (delivered to the
	// writer, or given up).
	std::vector<Ended> ended();

	// When due() has something next, as of NOW; none when nothing is held
	// or all that is left waits for a try in flight.
	std::optional<Clock::time_point> next_due(Clock::time_point now) const;
	std::size_t held() const { return parts_.size(); }

private:
	struct Way {
		Clock::time_point next;	// next try
		std::chrono::milliseconds backoff{0};
		bool in_flight = false, taken = false, refused = false;
		std::string refusal;
	};
	struct Held {
		std::uint64_t id;
		Outgoing part;
		Clock::time_point added;
		Way writer, successor;
	};
	Way &way(Held &h, Target t) { return t == Target::writer ? h.writer : h.successor; }
	bool wants(const Held &h, Target t, Clock::time_point now) const;
	void back_off(Way &w, Clock::time_point now);
	void end(std::list<Held>::iterator it, bool delivered, std::string why);

	OutboxSettings settings_;
	Random random_;
	std::list<Held> parts_;
	std::vector<Ended> ended_;
	std::uint64_t next_id_ = 1;
};

} // namespace gos::gpud
