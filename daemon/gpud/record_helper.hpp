// gpuoversubd's side of the root record helper (docs/jobwide.md, "The root
// helper"): the daemon, not root, may not write AdminComment, so it sends
// a run's record to gpuoversub-record.socket, whose helper
// (gpuoversub-slurm-facts --serve-record) writes it into the run's
// accounting record and answers one line. Blocking, with a deadline: the
// writer asks from a worker, never the event loop.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace gos::gpud {

struct HelperAnswer {
	// --write-record's answers, and no_answer when none came (no socket,
	// no helper, the deadline, or a line that is none of these).
	enum class Is { written, failed, not_ended, refused, no_answer };
	Is is = Is::no_answer;
	std::string line;	// the helper's line, or what went wrong
};

// The request on a connected stream FD ("JOB START\n", the record, the
// end of writing), and its answer, within DEADLINE in all.
HelperAnswer ask_record_helper_on(int fd, std::uint64_t job, std::int64_t start, const std::string &record,
				  std::chrono::milliseconds deadline);
// The same on a new connection to the helper's socket at PATH.
HelperAnswer ask_record_helper(const std::string &path, std::uint64_t job, std::int64_t start,
			       const std::string &record, std::chrono::milliseconds deadline);

// The same of PROGRAM (gpuoversub-slurm-facts) run as --serve-record USER
// on one end of a socketpair, as the socket unit's Accept=yes would: where
// the daemon writes records itself (jobwide.record_helper: direct, as
// root; none, as a slurmdbd Operator). STATUS, if given, gets its exit
// status (128 + the signal that ended it).
HelperAnswer ask_record_helper_spawned(const std::string &program, const std::string &user, std::uint64_t job,
				       std::int64_t start, const std::string &record, std::chrono::milliseconds deadline,
				       int *status = nullptr);

// Where gpuoversub-record.socket listens (jobwide.record_helper: socket).
inline constexpr char record_helper_socket[] = "/run/gpuoversub-record.sock";

} // namespace gos::gpud
