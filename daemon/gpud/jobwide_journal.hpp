// A run's journal at its writer, state_dir/jobwide-J-START.jsonl: its facts
// and deadline on the first line, then each part the run kept, as it came,
// so that a daemon restarted during the wait resumes the run rather than
// losing its parts (docs/jobwide.md, "The wait and the one write"). Each
// line goes out in one write(2) with O_APPEND: a crash leaves at most a
// torn last line, which resume skips.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/report/jobwide_record.hpp"

namespace gos::gpud {

// The longest line a journal holds: a part's payload is at most 8 KiB,
// and JSON's escapes may grow it.
constexpr std::size_t journal_max_line = 24 * 1024;

// The journal's path for a run.
std::string journal_path(const std::string &state_dir, std::uint64_t job, std::int64_t start);

class JobwideJournal {
public:
	// Creates PATH (0600, never through a link; an existing one is
	// replaced) with the run's head line. Throws std::runtime_error naming
	// the path and the reason.
	JobwideJournal(std::string path, const report::RunFacts &facts, const std::string &nodes, std::int64_t deadline);
	// Opens an existing journal to go on appending, as resume found it.
	explicit JobwideJournal(std::string path);
	~JobwideJournal();
	JobwideJournal(const JobwideJournal &) = delete;
	JobwideJournal &operator=(const JobwideJournal &) = delete;

	// Appends a kept part. Throws std::runtime_error (a full disk): the
	// run goes on in memory, without a journal.
	void append(const nlohmann::json &sent);
	const std::string &path() const { return path_; }

private:
	void write_line(const nlohmann::json &line);
	std::string path_;
	int fd_ = -1;
};

// A journal read back.
struct ResumedRun {
	report::RunFacts facts;
	std::string nodes;	// the node list, a hostlist expression
	std::int64_t deadline = 0;	// seconds since the epoch
	std::vector<nlohmann::json> parts;	// as sent, in order
	std::size_t skipped = 0;	// lines that were torn, too long or not JSON
};

// Reads PATH: throws std::runtime_error when it cannot be read (a link,
// not ours) or its head line is not a run's. At most MAX_PARTS parts are
// read; a line over journal_max_line is skipped unread.
ResumedRun resume_journal(const std::string &path, std::size_t max_parts);

} // namespace gos::gpud
