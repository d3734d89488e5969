// The job-wide channel's I/O, on the server's event loop (docs/jobwide.md):
// what the daemon's Jobwide state asks for, done.
//   - The door (jobwide_listener.hpp) listens on jobwide.port while
//     reports.admin_comment is on; a port it cannot bind is logged and
//     tried again every 5 s (the log names who holds it), and the daemon
//     serves its jobs meanwhile.
//   - Each try the outbox names goes out with send_frame, to the target's
//     NodeAddr, from this node's.
//   - This node's own parts, as writer, are opened on a worker (munged
//     blocks) and taken.
//   - A successor's closed run is written only if parts came to it and
//     slurmctld holds the writer's node down (asked on a worker).
//   - Each closed run has its record written once (the record helper, on a
//     worker, asked again while the run's accounting record has not ended
//     or slurmdbd cannot be reached, for at most send_for), then its
//     job-wide file, and only then is its journal dropped.
//   - The node table is read on a worker when it is due.
//   - The parts a previous daemon had not settled are taken again at start.
// A one-second tick looks for what is due; new work pokes it at once.
#pragma once

#include <utility>	// before asio: Boost 1.74 needs std::exchange

#include <boost/asio.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <string>

#include "common/util/rate_limit.hpp"
#include "daemon/gpud/daemon.hpp"
#include "daemon/gpud/jobwide_door.hpp"
#include "daemon/gpud/jobwide_listener.hpp"

namespace gos::gpud {

class JobwideIo {
public:
	// MUNGED opens and seals credentials (main.cpp gives it).
	JobwideIo(boost::asio::io_context &io, Daemon &daemon, Munged munged);
	// Closes the door and waits for the workers (each bounded by its
	// deadline); what they bring back after is dropped.
	~JobwideIo();
	JobwideIo(const JobwideIo &) = delete;
	JobwideIo &operator=(const JobwideIo &) = delete;

	void start();
	// After a reload: the door opens or closes as reports.admin_comment says.
	void reconfigured() { door(); }

	// The door's port, 0 while it is closed (tests).
	std::uint16_t port() const;

private:
	struct Closing;	// a closed run, its record being written
	using RunKey = std::pair<std::uint64_t, std::int64_t>;	// job, start
	// A run's file being written: one write in flight per run, and one
	// more after it when the file changed meanwhile (a late part).
	struct Filing {
		bool files = false;	// this write ends the run's wait: its journal goes after
		bool again = false, again_files = false;
		nlohmann::json fallback;	// the file, if the writer no longer holds the run
	};
	void door();
	void resume_parts();
	void tick();
	void pump();
	void poke();
	void read_nodes();
	void open_own();
	void send_due();
	void close_runs();
	void begin(ClosedRun run);
	void stood_by(std::shared_ptr<Closing> c);
	void dropped(std::shared_ptr<Closing> c);
	void record(std::shared_ptr<Closing> c);
	void write_record(std::shared_ptr<Closing> c);
	// STEP again for C after its backoff (doubled, 5 to 60 s).
	void later(std::shared_ptr<Closing> c, void (JobwideIo::*step)(std::shared_ptr<Closing>));
	void recorded(std::shared_ptr<Closing> c);
	// Writes the run's file as the writer holds it now (FALLBACK when it
	// holds it no longer); FILES: then the run is filed.
	void write_file(RunKey run, bool files, nlohmann::json fallback = {});
	// Runs WORK on POOL, then DONE with its result on the loop, unless
	// this is gone by then.
	template <class Work, class Done>
	void on_worker(boost::asio::thread_pool &pool, Work work, Done done);

	boost::asio::io_context &io_;
	Daemon &daemon_;
	Jobwide &jobwide_;
	Munged munged_;
	std::string own_user_;	// the daemon's user, for --serve-record
	// The door's checks and this node's own parts (munged), apart from
	// what may block for long (the record helper, Slurm, the disk), so
	// that a hung slurmdbd never holds a frame past its 5 s.
	boost::asio::thread_pool door_workers_{2};
	boost::asio::thread_pool slow_workers_{2};
	boost::asio::steady_timer tick_timer_;
	std::unique_ptr<JobwideListener> listener_;
	std::chrono::steady_clock::time_point door_again_{};	// a failed bind is tried again then
	std::chrono::steady_clock::time_point own_again_{};	// munged did not answer: own parts wait till then
	std::map<RunKey, Filing> filing_;
	std::size_t closing_ = 0;	// records being written
	RateLimit door_log_{std::chrono::minutes(1)}, nodes_log_{std::chrono::minutes(10)},
		closing_log_{std::chrono::minutes(1)};
	bool reading_nodes_ = false, poked_ = false;
	std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);	// the loop's only
};

} // namespace gos::gpud
