#include "daemon/gpud/jobwide_writer.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <stdexcept>

#include "common/util/atomic_file.hpp"
#include "common/util/hostlist.hpp"

namespace gos::gpud {

std::string_view name_of(WriterTook took)
{
	switch (took) {
	case WriterTook::kept:
		return "kept";
	case WriterTook::dup:
		return "dup";
	case WriterTook::late:
		return "late";
	case WriterTook::not_in_run:
		return "not_in_run";
	case WriterTook::unknown_run:
		return "unknown_run";
	}
	return "unknown";
}

JobwideWriter::JobwideWriter(WriterSettings settings, Logger log) : settings_(std::move(settings)), log_(std::move(log)) {}

void JobwideWriter::configure(WriterSettings settings)
{
	settings.state_dir = settings_.state_dir;
	settings_ = std::move(settings);
}

std::optional<std::string> JobwideWriter::expect(report::RunFacts facts, const std::string &nodes, std::int64_t now)
{
	Key key{facts.job, facts.start};
	if (runs_.count(key))
		return std::nullopt;
	if (runs_.size() >= settings_.max_runs && !forget_one_closed())
		return "this node holds " + std::to_string(runs_.size()) + " runs already, none of them written";
	Held h;
	std::string why, first;
	if (!(h.run = run_of(facts, nodes, why, first)))
		return why;
	h.deadline = now + settings_.wait_s;
	if (first != facts.writer) {	// the successor: senders come here only after failover_after
		h.covers = first;
		h.deadline += settings_.failover_after_s;
	}
	try {
		h.journal = std::make_unique<JobwideJournal>(journal_path(settings_.state_dir, facts.job, facts.start),
							     h.run->facts(), nodes, h.deadline);
	} catch (const std::runtime_error &e) {
		log_(std::string("job-wide: job ") + std::to_string(facts.job) +
		     ": waits without a journal (a restart would lose its parts): " + e.what());
	}
	runs_.emplace(key, std::move(h));
	return std::nullopt;
}

bool JobwideWriter::forget_one_closed()
{
	auto oldest = runs_.end();
	for (auto it = runs_.begin(); it != runs_.end(); ++it)
		if (it->second.run->closed() && (oldest == runs_.end() || it->second.deadline < oldest->second.deadline))
			oldest = it;
	if (oldest == runs_.end())
		return false;
	runs_.erase(oldest);	// its late parts now go nowhere: the file has the rest
	return true;
}

std::unique_ptr<JobwideRun> JobwideWriter::run_of(const report::RunFacts &facts, const std::string &nodes,
						  std::string &why, std::string &first) const
{
	std::vector<std::string> names;
	try {
		names = expand_hostlist(nodes, settings_.max_nodes + 1);
	} catch (const HostlistError &e) {
		why = std::string("its node list does not read: ") + e.what();
		return nullptr;
	}
	if (names.size() > settings_.max_nodes) {
		why = "its node list names more than jobwide.max_nodes (" + std::to_string(settings_.max_nodes) + ") nodes";
		return nullptr;
	}
	first = names.empty() ? "" : names.front();
	try {
		return std::make_unique<JobwideRun>(facts, names);
	} catch (const std::invalid_argument &e) {
		why = std::string("its node list is unusable: ") + e.what();
		return nullptr;
	}
}

std::pair<JobwideWriter::Runs::const_iterator, JobwideWriter::Runs::const_iterator>
JobwideWriter::runs_of(std::uint64_t job) const
{
	return {runs_.lower_bound({job, std::numeric_limits<std::int64_t>::min()}),
		runs_.upper_bound({job, std::numeric_limits<std::int64_t>::max()})};
}

bool JobwideWriter::knows(std::uint64_t job) const
{
	auto [first, last] = runs_of(job);
	return first != last;
}

bool JobwideWriter::member(std::uint64_t job, const std::string &node) const
{
	auto [first, last] = runs_of(job);
	return std::any_of(first, last, [&](const auto &r) { return r.second.run->has(node); });
}

void JobwideWriter::refused(std::uint64_t job, PartRefusal refusal)
{
	auto [first, last] = runs_of(job);
	if (first != last)
		std::prev(last)->second.run->refused(std::move(refusal));	// runs_of is const; the runs are ours
}

WriterTook JobwideWriter::take(std::uint64_t job, std::int64_t start, const report::NodePart &part,
			       const nlohmann::json &sent)
{
	auto it = runs_.find({job, start});
	if (it == runs_.end())
		return WriterTook::unknown_run;
	Held &h = it->second;
	if (h.dropped)
		return WriterTook::dup;	// the writer has the run
	switch (h.run->take(part, sent)) {
	case PartTaken::dup:
		return WriterTook::dup;
	case PartTaken::not_in_run:
		return WriterTook::not_in_run;
	case PartTaken::late:
		return WriterTook::late;
	case PartTaken::kept:
		break;
	}
	if (h.journal) {
		try {
			h.journal->append(sent);
		} catch (const std::runtime_error &e) {
			log_(std::string("job-wide: job ") + std::to_string(job) +
			     ": its journal stops here (a restart would lose its parts): " + e.what());
			h.journal.reset();
		}
	}
	return WriterTook::kept;
}

ClosedRun JobwideWriter::close(Held &h, std::int64_t now)
{
	ClosedRun out;
	out.record = h.run->close();
	out.facts = h.run->facts();
	out.file = h.run->file("");
	out.covers = h.covers;
	h.journal.reset();	// its file stays until filed()
	h.deadline = now + settings_.keep_s;
	return out;
}

void JobwideWriter::written(std::uint64_t job, std::int64_t start, std::string field)
{
	if (auto it = runs_.find({job, start}); it != runs_.end())
		it->second.field = std::move(field);
}

void JobwideWriter::filed(std::uint64_t job, std::int64_t start)
{
	try {
		remove_file(journal_path(settings_.state_dir, job, start));
	} catch (const std::runtime_error &e) {
		log_(std::string("job-wide: ") + e.what());
	}
}

void JobwideWriter::drop(std::uint64_t job, std::int64_t start)
{
	if (auto it = runs_.find({job, start}); it != runs_.end())
		it->second.dropped = true;
	filed(job, start);
}

void JobwideWriter::writer_took_own(std::uint64_t job, std::int64_t start)
{
	if (auto it = runs_.find({job, start}); it != runs_.end())
		it->second.writer_has_own = true;
}

bool JobwideWriter::writer_has_own(std::uint64_t job, std::int64_t start) const
{
	auto it = runs_.find({job, start});
	return it != runs_.end() && it->second.writer_has_own;
}

std::vector<ClosedRun> JobwideWriter::due(std::int64_t now)
{
	std::vector<ClosedRun> out;
	for (auto it = runs_.begin(); it != runs_.end();) {
		Held &h = it->second;
		if (!h.run->closed() && (h.run->complete() || now >= h.deadline))
			out.push_back(close(h, now));
		else if (h.run->closed() && now >= h.deadline) {
			it = runs_.erase(it);
			continue;
		}
		++it;
	}
	return out;
}

std::optional<std::int64_t> JobwideWriter::next_deadline() const
{
	std::optional<std::int64_t> next;
	for (const auto &[key, h] : runs_)
		if (!next || h.deadline < *next)
			next = h.deadline;
	return next;
}

std::optional<nlohmann::json> JobwideWriter::file_of(std::uint64_t job, std::int64_t start) const
{
	auto it = runs_.find({job, start});
	if (it == runs_.end() || !it->second.run->closed() || it->second.dropped)
		return std::nullopt;
	return it->second.run->file(it->second.field);
}

std::vector<ClosedRun> JobwideWriter::resume(std::int64_t now)
{
	std::vector<ClosedRun> out;
	std::error_code ec;
	std::vector<std::string> journals;
	for (std::filesystem::directory_iterator d(settings_.state_dir, ec), end; !ec && d != end; d.increment(ec)) {
		std::string name = d->path().filename().string();
		if (name.starts_with("jobwide-") && name.ends_with(".jsonl") && journals.size() < settings_.max_runs)
			journals.push_back(d->path().string());
	}
	for (const std::string &path : journals) {
		ResumedRun r;
		try {
			r = resume_journal(path, settings_.max_nodes);
		} catch (const std::runtime_error &e) {
			log_(std::string("job-wide: a journal left as it is: ") + e.what());
			continue;
		}
		// By name, not path: state_dir may be written with a trailing slash.
		if (std::filesystem::path(path).filename() !=
		    std::filesystem::path(journal_path(settings_.state_dir, r.facts.job, r.facts.start)).filename()) {
			log_("job-wide: the journal " + path + " names another run; left as it is");
			continue;
		}
		Held h;
		std::string why, first;
		if (!(h.run = run_of(r.facts, r.nodes, why, first))) {
			log_("job-wide: the journal " + path + " is left as it is: " + why);
			continue;
		}
		if (first != r.facts.writer)
			h.covers = first;
		for (const nlohmann::json &sent : r.parts) {
			try {
				h.run->take(sent.get<report::NodePart>(), sent);
			} catch (const nlohmann::json::exception &) {
				r.skipped++;
			}
		}
		if (r.skipped)
			log_("job-wide: the journal " + path + " had " + std::to_string(r.skipped) +
			     " lines that could not be read (a torn last write, or not a part)");
		h.deadline = r.deadline;
		try {
			h.journal = std::make_unique<JobwideJournal>(path);
		} catch (const std::runtime_error &e) {
			log_(std::string("job-wide: resumes without its journal: ") + e.what());
		}
		auto it = runs_.emplace(Key{r.facts.job, r.facts.start}, std::move(h)).first;
		if (r.deadline < now - settings_.wait_s) {	// not deadline + wait: a garbled head may overflow it
			// So long after the job that its record would be news to no
			// one: the file keeps the parts.
			ClosedRun c = close(it->second, now);
			c.file_only = true;
			out.push_back(std::move(c));
		}
	}
	return out;
}

} // namespace gos::gpud
