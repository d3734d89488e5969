#include "daemon/gpud/jobwide_journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <utility>

#include "common/util/atomic_file.hpp"
#include "common/util/held_dir.hpp"

namespace gos::gpud {
namespace {

[[noreturn]] void fail(const std::string &what, const std::string &path, int err)
{
	throw std::runtime_error(what + " " + path + ": " + std::strerror(err));
}

} // namespace

std::string journal_path(const std::string &state_dir, std::uint64_t job, std::int64_t start)
{
	return state_dir + "/jobwide-" + std::to_string(job) + "-" + std::to_string(start) + ".jsonl";
}

JobwideJournal::JobwideJournal(std::string path, const report::RunFacts &facts, const std::string &nodes,
			       std::int64_t deadline)
	: path_(std::move(path))
{
	// A journal of the same run left by an earlier daemon is resumed, not
	// made again; one that is here now is a leftover to replace.
	remove_file(path_);
	fd_ = open_in_held(path_, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC, 0600);
	if (fd_ < 0)
		fail("cannot create the journal", path_, errno);
	try {
		write_line({{"job", facts.job},
			    {"run", facts.run},
			    {"start", facts.start},
			    {"writer", facts.writer},
			    {"nodes", nodes},
			    {"deadline", deadline}});
	} catch (...) {
		// No journal without its head (a full disk, a head too long): a
		// constructor that throws runs no destructor, so close it here.
		::close(fd_);
		fd_ = -1;
		try {
			remove_file(path_);
		} catch (const std::runtime_error &) {
		}
		throw;
	}
}

JobwideJournal::JobwideJournal(std::string path) : path_(std::move(path))
{
	fd_ = open_in_held(path_, O_RDWR | O_NOFOLLOW | O_APPEND | O_CLOEXEC);
	if (fd_ < 0)
		fail("cannot open the journal", path_, errno);
	// A torn last line (the crash's write) is ended, so that the next part
	// starts a line of its own rather than joining it.
	char last = '\n';
	off_t size = ::lseek(fd_, 0, SEEK_END);
	if (size > 0 && ::pread(fd_, &last, 1, size - 1) == 1 && last != '\n' && ::write(fd_, "\n", 1) != 1) {
		int err = errno;
		::close(fd_);
		fd_ = -1;
		fail("cannot end the torn line of the journal", path_, err);
	}
}

JobwideJournal::~JobwideJournal()
{
	if (fd_ >= 0)
		::close(fd_);
}

void JobwideJournal::append(const nlohmann::json &sent)
{
	write_line({{"part", sent}});
}

void JobwideJournal::write_line(const nlohmann::json &line)
{
	std::string text = line.dump() + "\n";
	if (text.size() > journal_max_line)
		throw std::runtime_error("a journal line of " + std::to_string(text.size()) + " bytes for " + path_);
	// One write, so that a crash tears at most this line; a short write
	// (a full disk) is an error, and the torn line is skipped on resume.
	ssize_t n = ::write(fd_, text.data(), text.size());
	if (n < 0)
		fail("cannot write the journal", path_, errno);
	if (static_cast<std::size_t>(n) != text.size())
		fail("cannot write the journal", path_, ENOSPC);
}

ResumedRun resume_journal(const std::string &path, std::size_t max_parts)
{
	int fd = open_in_held(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		fail("cannot read the journal", path, errno);
	ResumedRun run;
	std::string line;
	bool head = true, complete = true;
	char buf[8192];
	// Reads line by line through a fixed buffer: a line over the cap is
	// dropped as it streams, so no journal, however written, costs more
	// than a line's memory.
	auto one_line = [&](std::string text) {
		if (head) {
			nlohmann::json h = nlohmann::json::parse(text, nullptr, false);
			if (!h.is_object() || !h.contains("job") || !h.contains("nodes") || !h.contains("deadline"))
				throw std::runtime_error("the journal " + path + " has no run head");
			try {
				run.facts.job = h.at("job").get<std::uint64_t>();
				run.facts.run = h.at("run").get<unsigned>();
				run.facts.start = h.at("start").get<std::int64_t>();
				run.facts.writer = h.at("writer").get<std::string>();
				run.nodes = h.at("nodes").get<std::string>();
				run.deadline = h.at("deadline").get<std::int64_t>();
			} catch (const nlohmann::json::exception &e) {
				throw std::runtime_error("the journal " + path + " has a bad run head: " + e.what());
			}
			head = false;
			return;
		}
		nlohmann::json l = nlohmann::json::parse(text, nullptr, false);
		if (!l.is_object() || !l.contains("part") || !l["part"].is_object() || run.parts.size() >= max_parts) {
			run.skipped++;
			return;
		}
		run.parts.push_back(std::move(l["part"]));
	};
	try {
		for (;;) {
			ssize_t n = ::read(fd, buf, sizeof buf);
			if (n < 0)
				fail("cannot read the journal", path, errno);
			if (n == 0)
				break;
			for (ssize_t i = 0; i < n; i++) {
				if (buf[i] != '\n') {
					if (line.size() < journal_max_line)
						line += buf[i];
					else
						complete = false;
					continue;
				}
				if (complete)
					one_line(std::move(line));
				else
					run.skipped++;
				line.clear();
				complete = true;
			}
		}
	} catch (...) {
		::close(fd);
		throw;
	}
	::close(fd);
	if (!line.empty())
		run.skipped++;	// torn: the write a crash cut
	if (head)
		throw std::runtime_error("the journal " + path + " is empty");
	return run;
}

} // namespace gos::gpud
