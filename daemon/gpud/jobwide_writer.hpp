// The runs this node writes the job-wide record of (docs/jobwide.md, "The
// wait and the one write"). A run is expected when this node's epilog
// names it writer, or successor: then the run stands by for the writer
// (covers), for failover_after longer, and the daemon writes its record
// only if the writer's node is down ("Failures"). Each part that passed
// the door goes to its run; a run's wait ends when
// every node's part is in or its deadline passes, and the run is then
// closed: its record made, for the daemon to write once with the job-wide
// file. A closed run is kept for `keep`, so that a late part reaches the
// file and never a second record. Each open run has a journal in
// state_dir, so that a restarted daemon resumes it (resume()).
//
// No I/O but the journals; no clock of its own: the caller passes now,
// in seconds since the epoch, since deadlines outlive a restart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "daemon/gpud/jobwide_journal.hpp"
#include "daemon/gpud/jobwide_run.hpp"

namespace gos::gpud {

struct WriterSettings {
	std::string state_dir;
	std::int64_t wait_s = 60;	// jobwide.wait
	std::int64_t failover_after_s = 60;	// jobwide.failover_after: a successor's wait is this longer
	std::int64_t keep_s = 3600;	// jobwide.keep: closed runs, for late parts
	std::size_t max_nodes = 16384;	// jobwide.max_nodes
	std::size_t max_runs = 4096;	// open and kept runs, all jobs
};

// A run whose wait is over: what the daemon writes.
struct ClosedRun {
	report::RunFacts facts;
	report::JobwideRecord record;
	nlohmann::json file;	// the job-wide file; its "field" is the daemon's to set
	bool file_only = false;	// resumed long after its deadline: no record is written
	std::string covers;	// a successor's run: the writer it stands in for
};

// What became of a part offered to the writer.
enum class WriterTook {
	kept, dup, late,	// as JobwideRun says
	not_in_run,	// its node is not in the run's list
	unknown_run,	// no run of that job and start is expected here
};
std::string_view name_of(WriterTook took);

class JobwideWriter {
public:
	using Logger = std::function<void(const std::string &)>;

	JobwideWriter(WriterSettings settings, Logger log);
	// A reload: runs expected from now on follow SETTINGS (the state
	// directory is fixed at start and kept).
	void configure(WriterSettings settings);

	// Reads back the journals a previous daemon left. A run whose deadline
	// passed more than `wait` ago is closed at once (the file only: the
	// daemon writes no record so long after the job); the others resume
	// their wait. Returns the runs to write, as due() does.
	std::vector<ClosedRun> resume(std::int64_t now);

	// Expects a run: FACTS, and its node list as a hostlist expression.
	// FACTS.writer is this node: the list's first (the writer), or its
	// second (the successor, which stands by). Known already: nothing changes. Returns why not when the list does
	// not expand, holds more than max_nodes names, or max_runs are held
	// and none of them is written (a written one goes to make room).
	std::optional<std::string> expect(report::RunFacts facts, const std::string &nodes, std::int64_t now);

	// Whether a run of JOB is held here.
	bool knows(std::uint64_t job) const;
	// Whether NODE is in the node list of a run of JOB held here: the
	// door's membership check (check 2), before the credential is decoded.
	bool member(std::uint64_t job, const std::string &node) const;

	// A frame for JOB the door refused, for the job-wide file of the
	// job's newest run here (a refused frame's run is not known).
	void refused(std::uint64_t job, PartRefusal refusal);

	// A part of run (JOB, START) that passed the door, as sent.
	WriterTook take(std::uint64_t job, std::int64_t start, const report::NodePart &part, const nlohmann::json &sent);

	// Runs whose wait is over (all parts in, or the deadline passed),
	// closed now; and closed runs past `keep` forgotten.
	std::vector<ClosedRun> due(std::int64_t now);
	// What became of a closed run's record: FIELD, the segment written
	// (empty: none). The run's file says so from now on (file_of).
	void written(std::uint64_t job, std::int64_t start, std::string field);
	// A closed run's file is written: its journal goes. Until then a
	// restart closes the run again from the journal, and writes it again.
	void filed(std::uint64_t job, std::int64_t start);
	// A successor's closed run that is not written here: its journal goes,
	// and it has no file; a part that comes later is answered dup.
	void drop(std::uint64_t job, std::int64_t start);
	// The writer took this node's own part of a run this node stands by
	// for: the other nodes' parts reached it too, or came here.
	void writer_took_own(std::uint64_t job, std::int64_t start);
	bool writer_has_own(std::uint64_t job, std::int64_t start) const;
	// The earliest deadline of a run (a wait ends, or a kept run is
	// forgotten), for the daemon's timer.
	std::optional<std::int64_t> next_deadline() const;

	// The file of a closed run again (with its late parts), to rewrite it
	// after a late part; nothing if the run is not closed and kept.
	std::optional<nlohmann::json> file_of(std::uint64_t job, std::int64_t start) const;

	std::size_t runs() const { return runs_.size(); }

private:
	struct Held {
		std::unique_ptr<JobwideRun> run;
		std::unique_ptr<JobwideJournal> journal;	// open runs' (none when it failed)
		std::int64_t deadline = 0;	// open: when the wait ends; closed: when it is forgotten
		std::string field;	// filed: the segment written
		std::string covers;	// a successor's: the run's writer
		bool writer_has_own = false;	// a successor's: the writer took its own part
		bool dropped = false;	// a successor's, closed and not written here
	};
	using Key = std::pair<std::uint64_t, std::int64_t>;	// job, start
	using Runs = std::map<Key, Held>;
	// A run of NODES, a hostlist of at most max_nodes names; none, and why.
	// FIRST: the list's first name, the run's writer.
	std::unique_ptr<JobwideRun> run_of(const report::RunFacts &facts, const std::string &nodes, std::string &why,
					   std::string &first) const;
	// The runs of JOB held here.
	std::pair<Runs::const_iterator, Runs::const_iterator> runs_of(std::uint64_t job) const;
	ClosedRun close(Held &h, std::int64_t now);
	// Room for a run: the written run kept longest goes; false if none is.
	bool forget_one_closed();

	WriterSettings settings_;
	Logger log_;
	Runs runs_;
};

} // namespace gos::gpud
