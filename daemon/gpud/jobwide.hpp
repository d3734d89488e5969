// The job-wide channel's state in the daemon, apart from any event loop
// (docs/jobwide.md): the runs this node writes (the writer), the parts it
// has to send (the outbox), Slurm's node table, and this node's own parts
// waiting to be opened. The epilog's JOBWIDE_PART comes here; the server's
// JobwideIo does the I/O all of this asks for, and is poked when there is
// new work.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>

#include "common/config/config.hpp"
#include "common/jobwide/frame.hpp"
#include "daemon/gpud/answer.hpp"
#include "daemon/gpud/jobwide_listener.hpp"
#include "daemon/gpud/jobwide_outbox.hpp"
#include "daemon/gpud/jobwide_pending.hpp"
#include "daemon/gpud/jobwide_writer.hpp"
#include "daemon/gpud/node_table.hpp"

namespace gos::gpud {

// What the server counts for the exporter.
struct JobwideCounts {
	std::uint64_t run_ends = 0;	// JOBWIDE_PART requests taken with a part
	std::uint64_t queued = 0;	// parts put in the outbox
	std::uint64_t delivered = 0, given_up = 0;	// parts whose sending ended
	std::uint64_t runs_written = 0;	// runs whose record went to the helper and was written
	std::uint64_t runs_unwritten = 0;	// runs whose record could not be written (the file stands)
	DoorCounts door;
};

class Jobwide {
public:
	using Clock = std::chrono::steady_clock;
	using Logger = JobwideWriter::Logger;

	Jobwide(const config::Config &cfg, Logger log);

	// The policy was reloaded: waits, sending times and caps follow it
	// from the next run on.
	void configure(const config::Config &cfg);

	// A run ended on this node (its epilog's JOBWIDE_PART): expects the
	// run when this node is its writer, and sends its part on (to the
	// writer, or to this node's own door), saved first (jobwide_pending.hpp)
	// so that a restart loses no part. Why not, for the caller: then
	// nothing is held. Refused while reports.admin_comment is off.
	std::optional<Refusal> run_end(const RunEnd &end, std::int64_t now, Clock::time_point mono);
	// A saved run end taken again after a restart, as the epilog gave it.
	std::optional<Refusal> resume_end(const RunEnd &end, std::int64_t now, Clock::time_point mono)
	{
		return take_end(end, now, mono, false);
	}
	// The part of run (JOB, START) is where it goes, or never will be:
	// its saved end is dropped.
	void part_settled(std::uint64_t job, std::int64_t start);
	const std::string &state_dir() const { return state_dir_; }

	// This node's own parts, as writer (or successor standing by), to be
	// opened (on a worker, by the server) and taken: they came on the root
	// socket, so no address check.
	struct OwnPart {
		jobwide::Frame frame;
		std::int64_t start = 0;
		bool writes = false;	// its run's writer: the part is settled once taken
	};
	std::deque<OwnPart> take_own();
	// One of them that could not be opened yet (munged did not answer),
	// for the next turn; false (and not kept) when too many wait already.
	bool own_again(OwnPart part);

	// The server's hook: called whenever there is new work.
	void on_work(std::function<void()> poke) { poke_ = std::move(poke); }

	// This node's name, as its epilogs say (empty until the first): the
	// node table's entry of it is the address a send leaves from.
	const std::string &self() const { return self_; }

	JobwideWriter &writer() { return writer_; }
	JobwideOutbox &outbox() { return outbox_; }
	NodeTable &nodes() { return nodes_; }
	JobwideCounts &counts() { return counts_; }

private:
	void poke()
	{
		if (poke_)
			poke_();
	}
	std::optional<Refusal> take_end(const RunEnd &end, std::int64_t now, Clock::time_point mono, bool save);

	bool on_;	// reports.admin_comment: the channel serves
	std::string state_dir_;
	Logger log_;
	JobwideWriter writer_;
	JobwideOutbox outbox_;
	NodeTable nodes_;
	std::deque<OwnPart> own_;
	std::function<void()> poke_;
	std::string self_;
	JobwideCounts counts_;
};

// The writer's and the outbox's settings from a configuration.
WriterSettings writer_settings(const config::Config &cfg);
OutboxSettings outbox_settings(const config::Config &cfg);

} // namespace gos::gpud
