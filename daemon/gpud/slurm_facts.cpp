#include "daemon/gpud/slurm_facts.hpp"

#include <pwd.h>

#include <charconv>
#include <cmath>
#include <ctime>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "common/util/hostlist.hpp"

namespace gos::gpud {
namespace {

template <class T>
bool number(const std::string &s, T &out)
{
	auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
	return ec == std::errc() && p == s.data() + s.size();
}

const char *const kinds[] = {"partitions", "qos", "fairshare", "jobs"};

// Whether W is a node list gpuoversub can read: hostlist syntax, within its
// bounds (hostlist.hpp), so that a long or broken one is set aside.
bool hostlist(const std::string &w)
{
	if (w.empty())
		return false;
	try {
		return !expand_hostlist(w).empty();
	} catch (const HostlistError &) {
		return false;
	}
}

// Slurm names users; jobs carry uids. Resolved here, in the background,
// for the name service may be slow.
std::map<std::pair<std::string, uid_t>, double> by_uid(const std::map<std::pair<std::string, std::string>, double> &by_name)
{
	std::map<std::pair<std::string, uid_t>, double> out;
	for (const auto &[key, factor] : by_name) {
		passwd pw, *found = nullptr;
		char buf[4096];
		if (::getpwnam_r(key.second.c_str(), &pw, buf, sizeof buf, &found) == 0 && found)
			out[{key.first, found->pw_uid}] = factor;
	}
	return out;
}

} // namespace

SlurmReading parse_slurm_facts(const std::string &text)
{
	SlurmReading r;
	std::istringstream in(text);
	for (std::string line; std::getline(in, line);) {
		std::istringstream words(line);
		std::string kind, a, b, c, e, extra;
		words >> kind >> a >> b >> c >> e >> extra;
		auto name = [](const std::string &w) { return w == "-" ? std::string() : w; };
		std::uint32_t u = 0;
		std::uint64_t id = 0;
		std::int64_t start = 0;
		double d = 0;
		if (kind == "partition" && c.empty() && number(b, u))
			r.partition_factor[a] = u;
		else if (kind == "qos" && c.empty() && number(b, u))
			r.qos_priority[a] = u;
		else if (kind == "fairshare" && e.empty() && number(c, d) && std::isfinite(d) && d >= 0 && d <= 1)
			r.fairshare[{a, b}] = d;
		else if (kind == "job" && number(a, id) && id && b == "unknown" && c.empty())
			r.jobs[id] = {true, "unknown to slurmctld"};
		else if (kind == "job" && number(a, id) && id && (b == "running" || b == "finished") && !c.empty() &&
			 e.empty())
			r.jobs[id] = {b == "finished", c};
		else if (kind == "names" && number(a, id) && id && !e.empty() && extra.empty())
			r.names[id] = {name(b), name(c), name(e)};
		else if (kind == "run" && number(a, id) && id && number(b, u) && number(c, start) && start > 0 && e.empty())
			r.runs[id] = {u, start};
		else if (kind == "nodes" && number(a, id) && id && hostlist(b) && c.empty())
			r.nodes[id] = b;
		else if (kind == "unavailable" && !b.empty())
			r.unavailable[a] = line.substr(line.find(b, line.find(a) + a.size()));
		else if (!line.empty())
			r.garbled.push_back(line);
	}
	return r;
}

SlurmFacts::SlurmFacts(const config::SlurmWeights &settings, Reader reader, Logger log)
	: reader_(std::move(reader)), log_(std::move(log)), settings_(settings),
	  thread_([this](std::stop_token stop) { run(stop); })
{
}

SlurmFacts::~SlurmFacts()
{
	thread_.request_stop();
	wake_.notify_all();
}

void SlurmFacts::configure(const config::SlurmWeights &settings)
{
	{
		std::lock_guard lock(mu_);
		settings_ = settings;
		read_now_ = true;
	}
	wake_.notify_all();	// read now, with the new settings
}

void SlurmFacts::run(std::stop_token stop)
{
	std::unique_lock lock(mu_);
	while (!stop.stop_requested()) {
		FactsQuery query{settings_.fairshare, watched_};
		lock.unlock();
		SlurmReading r;
		try {
			r = parse_slurm_facts(reader_(query, stop));
		} catch (const std::exception &e) {
			for (const char *k : kinds)
				r.unavailable[k] = e.what();
		}
		if (!query.fairshare)
			r.unavailable.erase("fairshare");
		if (query.jobs.empty())
			r.unavailable.erase("jobs");
		auto fairshare_by_uid = by_uid(r.fairshare);
		lock.lock();
		if (stop.stop_requested())
			break;
		take(r, std::move(fairshare_by_uid));
		take_jobs(r, query.jobs);
		if (r.garbled != garbled_)	// once, not every refresh
			for (const auto &line : r.garbled)
				log_("Slurm facts: ignored a line not understood: '" + line + "'");
		garbled_ = std::move(r.garbled);
		wake_.wait_for(lock, stop, std::chrono::nanoseconds(settings_.refresh_ns),
			       [this] { return std::exchange(read_now_, false); });
	}
}

// A kind read replaces the cached values; one not read keeps them.
void SlurmFacts::take(const SlurmReading &r, std::map<std::pair<std::string, uid_t>, double> fairshare)
{
	bool changed = false;
	auto replace = [&](auto &cached, const auto &fresh, Kind &k, const std::string &name, bool wanted) {
		auto it = r.unavailable.find(name);
		if (!wanted)
			return;
		if (it != r.unavailable.end()) {
			note(k, name, it->second);
			return;
		}
		note(k, name, "");
		k.read = true;
		if (cached != fresh) {
			cached = fresh;
			changed = true;
		}
	};
	replace(partition_factor_, r.partition_factor, partitions_kind_, "partitions", true);
	replace(qos_priority_, r.qos_priority, qos_kind_, "qos", true);
	replace(fairshare_, fairshare, fairshare_kind_, "fairshare", settings_.fairshare);
	generation_ += changed;
	readings_++;
}

// The jobs asked about, as read. A job read finished keeps the time it was
// first read so; one not asked about is forgotten. When slurmctld could
// not be read, every job is unreachable until it is.
void SlurmFacts::take_jobs(const SlurmReading &r, const std::set<std::uint64_t> &asked)
{
	if (asked.empty())
		return;
	auto it = r.unavailable.find("jobs");
	note(jobs_kind_, "jobs", it == r.unavailable.end() ? "" : it->second, "; no job is ended on Slurm's word");
	if (!jobs_kind_.failure.empty())
		return;
	jobs_kind_.read = true;
	auto now = static_cast<std::int64_t>(std::time(nullptr));
	std::map<std::uint64_t, SlurmJob> fresh;
	for (std::uint64_t id : asked) {
		auto line = r.jobs.find(id);
		if (line == r.jobs.end())
			continue;
		SlurmJob &j = fresh[id];
		j.is = line->second.finished ? SlurmJob::Is::finished : SlurmJob::Is::running;
		j.state = line->second.state;
		auto before = jobs_.find(id);
		bool was_finished = before != jobs_.end() && before->second.is == SlurmJob::Is::finished;
		if (j.is == SlurmJob::Is::finished)
			j.finished_since = was_finished ? before->second.finished_since : now;
		if (auto names = r.names.find(id); names != r.names.end())
			j.names = names->second;
		if (auto run = r.runs.find(id); run != r.runs.end()) {
			j.run = run->second;
			if (runs_seen_.insert_or_assign(id, run->second).second) {
				seen_order_.push_back(id);
				if (seen_order_.size() > runs_seen_max) {
					runs_seen_.erase(seen_order_.front());
					seen_order_.pop_front();
				}
			}
		}
		if (auto nodes = r.nodes.find(id); nodes != r.nodes.end())
			j.nodes = nodes->second;
		// New names weigh the job differently: the event loop applies them.
		if (j.names && (before == jobs_.end() || before->second.names != j.names))
			generation_++;
	}
	jobs_ = std::move(fresh);
}

void SlurmFacts::watch(std::set<std::uint64_t> jobs)
{
	std::lock_guard lock(mu_);
	watched_ = std::move(jobs);
}

void SlurmFacts::ask(std::uint64_t job)
{
	{
		std::lock_guard lock(mu_);
		watched_.insert(job);
		read_now_ = true;
	}
	wake_.notify_all();
}

SlurmJob SlurmFacts::job(std::uint64_t id) const
{
	std::lock_guard lock(mu_);
	if (!watched_.count(id))
		return {};
	if (!jobs_kind_.failure.empty()) {
		SlurmJob away;
		away.is = SlurmJob::Is::unreachable;
		away.reason = jobs_kind_.failure;
		return away;
	}
	auto it = jobs_.find(id);
	return it == jobs_.end() ? SlurmJob{} : it->second;
}

std::optional<SlurmRun> SlurmFacts::run_seen(std::uint64_t id) const
{
	std::lock_guard lock(mu_);
	auto it = runs_seen_.find(id);
	return it == runs_seen_.end() ? std::nullopt : std::optional<SlurmRun>(it->second);
}

void SlurmFacts::forget_run(std::uint64_t id)
{
	std::lock_guard lock(mu_);
	if (runs_seen_.erase(id))
		seen_order_.erase(std::find(seen_order_.begin(), seen_order_.end(), id));
}

// Logs a kind's failure when it starts or changes, and its recovery: once,
// not every refresh. `meanwhile` says what a failure means, when more than
// that the cached values stay.
void SlurmFacts::note(Kind &k, const std::string &name, const std::string &why, const char *meanwhile)
{
	if (why == k.failure)
		return;
	if (why.empty())
		log_("Slurm facts: " + name + " read again");
	else
		log_("Slurm facts: cannot read " + name + " (" + why + ")" +
		     (meanwhile ? meanwhile : k.read ? "; the last values read stay" : "; unknown until read"));
	k.failure = why;
}

// Each fact's own reason: why its value is stale or missing.
std::string SlurmFacts::why(const Kind &k, bool found, const std::string &what) const
{
	if (found)
		return k.failure.empty() ? "" : "the last value read; " + k.failure;
	return k.failure.empty() ? "Slurm has no such " + what : k.failure;
}

SlurmPriorities SlurmFacts::lookup(const std::string &partition, const std::string &qos, const std::string &account,
				   uid_t user) const
{
	std::lock_guard lock(mu_);
	SlurmPriorities p;
	auto find = [&](const auto &cached, const auto &key, auto &out, std::string &reason, const Kind &k,
			const std::string &what) {
		auto it = cached.find(key);
		if (it != cached.end())
			out = it->second;
		reason = why(k, it != cached.end(), what);
	};
	if (settings_.partition_factor)
		find(partition_factor_, partition, p.partition_factor, p.partition_reason, partitions_kind_, "partition");
	if (settings_.qos_priority)
		find(qos_priority_, qos, p.qos_priority, p.qos_reason, qos_kind_, "QOS");
	if (settings_.fairshare)
		find(fairshare_, std::pair(account, user), p.fairshare, p.fairshare_reason, fairshare_kind_,
		     "association (account and user)");
	return p;
}

std::uint64_t SlurmFacts::generation() const
{
	std::lock_guard lock(mu_);
	return generation_;
}

std::uint64_t SlurmFacts::readings() const
{
	std::lock_guard lock(mu_);
	return readings_;
}

} // namespace gos::gpud
