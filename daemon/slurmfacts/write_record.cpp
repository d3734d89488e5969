// gpuoversub-slurm-facts --write-record JOB START: puts one run's job-wide
// record (segment version 3, read on stdin, at most 16 KiB) into that run's
// accounting record, keeping the site's text of its AdminComment
// (docs/jobwide.md, "The wait and the one write"). It runs as root (the
// record helper): slurmdbd takes AdminComment from root, SlurmUser or an
// Operator only.
//
// One slurmdb_jobs_get (every run of the job) finds the record whose start
// is START. One slurmdb_job_modify, narrowed to that record by its state
// and an end-time window of its end alone, writes it. slurmdbd changes the
// newest record the condition matches, so nothing is written where another
// record of the job has the same state and end; and should slurmdbd say it
// changed more than one, the change is rolled back.
//
// It answers one line on stdout, and its exit status says which:
//   0  written ...		the record is in (or already was)
//   1  failed REASON		slurmdbd could not be asked, or holds no such run
//   2  usage
//   3  not ended ...		the run still runs after 5 tries a second apart on
//				one connection: ask again later
//   4  refused REASON		nothing written, and asking again will not help:
//				also when the run's record holds as many parts
//				already (a successor's, a resumed writer's)
#include "daemon/slurmfacts/write_record.hpp"

#include <slurm/slurmdb.h>

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "common/report/admin_comment.hpp"
#include "common/report/jobwide_record.hpp"

namespace gos::slurmfacts {
namespace {

namespace slurm = gos::slurm;

constexpr std::size_t max_record = 16384;	// the segment, "gpuoversub=" included
constexpr std::size_t max_field = 65535;	// slurmdbd's admin_comment column
constexpr unsigned not_ended_tries = 5;	// a second apart

int answer(int status, const std::string &line)
{
	std::printf("%s\n", line.c_str());
	return status;
}

// The record on stdin, or why it cannot be taken.
std::string read_record(std::string &record)
{
	char buf[4096];
	for (;;) {
		ssize_t n = ::read(0, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return std::string("cannot read the record: ") + std::strerror(errno);
		if (n == 0)
			break;
		record.append(buf, static_cast<std::size_t>(n));
		if (record.size() > max_record + 1)
			return "the record is over 16 KiB";
	}
	if (!record.empty() && record.back() == '\n')
		record.pop_back();
	if (record.size() > max_record)
		return "the record is over 16 KiB";
	if (!report::slurmdbd_safe(record))
		return "the record holds a quote, a backslash or a control character, which slurmdbd does not escape";
	report::AdminComment c = report::split_admin_comment(record);
	if (c.ours.empty() || !c.site.empty() || !c.newer.empty() || !c.ours.contains("gos") ||
	    !c.ours["gos"].is_number_integer() || c.ours["gos"].get<long long>() != 3)
		return "the record is not one gpuoversub= segment of version 3";
	if (report::join_admin_comment({"", c.ours}) != record)
		return "the record is not written as gpuoversub writes it";
	// Exactly the keys and types a record has: read and written again,
	// it is the same (issue 50, finding 9: a record with foreign keys).
	const auto read = c.ours.get<report::JobwideRecord>();
	if (!read.unread.empty() || nlohmann::json(read) != c.ours)
		return "the record holds keys or values gpuoversub does not write";
	return "";
}

// The parts of a version 3 record; 0 when it has none that reads.
std::uint64_t parts_of(const report::AdminComment &c)
{
	const auto it = c.ours.find("parts");
	return it != c.ours.end() && it->is_number_unsigned() ? it->get<std::uint64_t>() : 0;
}

// How many parts the run's record holds, when AdminComment already holds
// our record of the run that started at START.
std::optional<std::uint64_t> parts_held(const char *field, long long start)
{
	if (!field)
		return std::nullopt;
	report::AdminComment c = report::split_admin_comment(field);
	const auto gos = c.ours.find("gos"), at = c.ours.find("start");
	if (gos == c.ours.end() || !gos->is_number_integer() || gos->get<long long>() != 3 || at == c.ours.end() ||
	    !at->is_number_integer() || at->get<long long>() != start)
		return std::nullopt;
	return parts_of(c);
}

bool number(const char *s, long long &out)
{
	char *end = nullptr;
	errno = 0;
	out = std::strtoll(s, &end, 10);
	return *s && end && !*end && !errno;
}

// A condition naming job alone (every part of an array or heterogeneous
// job aside), in lists that own nothing: their items live on the caller's
// stack.
struct JobCond {
	slurm_selected_step_t step{};
	slurmdb_job_cond_t cond{};
	explicit JobCond(std::uint32_t job)
	{
		step.array_task_id = NO_VAL;
		step.het_job_offset = NO_VAL;
		step.step_id.job_id = job;
		step.step_id.step_het_comp = NO_VAL;
		step.step_id.step_id = NO_VAL;
		// Left 0, it asks for records whose flags share no bit with 0:
		// none.
		cond.db_flags = SLURMDB_JOB_FLAG_NOTSET;
		cond.step_list = slurm_list_create(nullptr);
		slurm_list_append(cond.step_list, &step);
	}
	~JobCond()
	{
		for (slurm::List *l : {&cond.step_list, &cond.cluster_list, &cond.state_list})
			if (*l)
				slurm_list_destroy(*l);
	}
	JobCond(const JobCond &) = delete;
	JobCond &operator=(const JobCond &) = delete;
	void add(slurm::List &list, char *item)
	{
		if (!list)
			list = slurm_list_create(nullptr);
		slurm_list_append(list, item);
	}
};

std::string slurmdbd_error(const char *what)
{
	int err = slurm::last_errno();
	return std::string("slurmdbd: ") + what + (err ? std::string(": ") + slurm_strerror(err) : "");
}

// The write itself, on an open connection: the exit status.
// An answer line and its status, not yet said.
struct Answered {
	int status = 0;
	std::string line;
};

Answered write_on(void *db, std::uint32_t job, long long start, const std::string &record)
{
	JobCond all(job);
	all.cond.flags = JOBCOND_FLAG_DUP | JOBCOND_FLAG_NO_STEP;
	errno = 0;
	slurm::List runs = slurmdb_jobs_get(db, &all.cond);
	if (!runs)
		return {1, "failed " + slurmdbd_error("cannot list the job's runs")};
	std::vector<slurmdb_job_rec_t *> found, job_runs;
	slurm::ListIterator it = slurm_list_iterator_create(runs);
	while (void *x = slurm_list_next(it)) {
		auto *r = static_cast<slurmdb_job_rec_t *>(x);
		if (r->jobid != job)
			continue;
		job_runs.push_back(r);
		if (static_cast<long long>(r->start) == start)
			found.push_back(r);
	}
	slurm_list_iterator_destroy(it);
	int status = 0;
	std::string line;
	if (found.empty()) {
		status = 1;
		line = "failed slurmdbd holds no run of job " + std::to_string(job) + " that started at " +
		       std::to_string(start);
		std::string starts;
		for (slurmdb_job_rec_t *r : job_runs)
			starts += (starts.empty() ? "" : ", ") + std::to_string(static_cast<long long>(r->start));
		line += job_runs.empty() ? " (nor any run of it)" : " (its runs started at " + starts + ")";
	} else if (found.size() > 1) {
		status = 4;
		line = "refused " + std::to_string(found.size()) + " records of job " + std::to_string(job) +
		       " started at " + std::to_string(start);
	} else {
		slurmdb_job_rec_t &run = *found.front();
		std::uint32_t base = run.state & JOB_STATE_BASE;
		std::size_t twins = 0;
		for (slurmdb_job_rec_t *r : job_runs)
			twins += r->state == run.state && r->end == run.end;
		report::AdminComment field = report::split_admin_comment(run.admin_comment ? run.admin_comment : "");
		report::AdminComment ours = report::split_admin_comment(record);
		field.ours = ours.ours;
		std::string text = report::join_admin_comment(field);
		if (!run.end || (base < JOB_COMPLETE && !(run.state & JOB_REQUEUE))) {	// a requeued run is REQUEUE
			status = 3;
			line = "not ended: job " + std::to_string(job) + "'s run that started at " + std::to_string(start) +
			       " still runs";
		} else if (twins != 1) {
			status = 4;
			line = "refused another record of job " + std::to_string(job) +
			       " has the same state and end, and could be written in its place";
		} else if (!run.cluster || !*run.cluster) {
			status = 4;
			line = "refused the run's record names no cluster";
		} else if (!report::slurmdbd_safe(field.site) || !report::slurmdbd_safe(field.newer)) {
			status = 4;
			line = "refused the site's text in AdminComment holds a quote, a backslash or a control character, "
			       "which slurmdbd does not escape";
		} else if (text.size() > max_field) {
			status = 4;
			line = "refused the site's text and the record would be " + std::to_string(text.size()) +
			       " bytes, over AdminComment's 65535; the site's text is never cut";
		} else if (run.admin_comment && text == run.admin_comment) {
			line = "written already";
		} else if (auto held = parts_held(run.admin_comment, start); held && *held >= parts_of(ours)) {
			// A writer and its successor may both write (the writer was
			// only slow), or one resumed after a restart: the first record
			// with the most parts stays (issue 50, finding 5).
			status = 4;
			line = "refused the run's record holds " + std::to_string(*held) + " parts already, this one " +
			       std::to_string(parts_of(ours)) + ": kept";
		} else {
			JobCond one(job);
			std::string state = std::to_string(run.state);
			one.add(one.cond.cluster_list, run.cluster);
			one.add(one.cond.state_list, state.data());
			one.cond.usage_start = run.end;
			one.cond.usage_end = run.end;
			slurmdb_job_rec_t change{};
			change.derived_ec = NO_VAL;
			change.admin_comment = text.data();
			errno = 0;
			slurm::List changed = slurmdb_job_modify(db, &one.cond, &change);
			int count = changed ? slurm_list_count(changed) : 0;
			if (changed)
				slurm_list_destroy(changed);
			if (count == 1 && slurmdb_connection_commit(db, true) == SLURM_SUCCESS) {
				line = "written " + std::to_string(text.size()) + " bytes";
			} else {
				slurmdb_connection_commit(db, false);
				status = count > 1 ? 4 : 1;
				line = count > 1 ? "refused slurmdbd matched " + std::to_string(count) + " records; rolled back"
						 : "failed " + slurmdbd_error("did not write the record");
			}
		}
	}
	slurm_list_destroy(runs);
	return {status, line};
}

} // namespace

int write_record(const char *job_arg, const char *start_arg, std::string (*init)(), void (*read)())
{
	long long job = 0, start = 0;
	if (!number(job_arg, job) || job <= 0 || job > UINT32_MAX || !number(start_arg, start) || start <= 0) {
		std::fprintf(stderr, "usage: gpuoversub-slurm-facts --write-record JOB START <RECORD\n");
		return 2;
	}
	std::string record;
	if (std::string why = read_record(record); !why.empty())
		return answer(4, "refused " + why);
	if (read)
		read();
	if (std::string why = init(); !why.empty())
		return answer(1, "failed " + why);
	std::uint16_t flags = 0;
	errno = 0;
	void *db = slurmdb_connection_get(&flags);
	if (!db)
		return answer(1, "failed " + slurmdbd_error("cannot be reached"));
	// slurmdbd has a run's end a moment after its last epilog, and the
	// writer asks at once: asked again on the same connection, a second
	// apart, before the daemon is told to come back (issue 50, finding
	// 10: a connection per try cost slurmdbd RPCs per job).
	Answered a;
	for (unsigned tries = 1;; tries++) {
		a = write_on(db, static_cast<std::uint32_t>(job), start, record);
		if (a.status != 3 || tries >= not_ended_tries)
			break;
		::sleep(1);
	}
	const int status = answer(a.status, a.line);
	slurmdb_connection_close(&db);
	slurm_fini();
	return status;
}

} // namespace gos::slurmfacts
