#include "daemon/gpud/jobwide_io.hpp"

#include <unistd.h>

#include <algorithm>
#include <ctime>

#include "common/report/jobwide_record.hpp"
#include "common/util/atomic_file.hpp"
#include "common/util/log.hpp"
#include "common/util/user_name.hpp"
#include "daemon/gpud/jobwide_sender.hpp"
#include "daemon/gpud/port_holder.hpp"
#include "daemon/gpud/record_helper.hpp"
#include "daemon/gpud/slurm_facts.hpp"

namespace gos::gpud {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

constexpr auto tick_period = 1s;
constexpr auto door_again_after = 5s;
constexpr auto send_within = 10s;	// one try: connect, frame, answer
// The facts program's and the record helper's: longer than Slurm's own
// MessageTimeout (10 s by default), so that a slow slurmdbd answers.
constexpr unsigned facts_deadline_s = 30;
constexpr auto helper_within = 30s;
constexpr auto record_backoff_min = 5s, record_backoff_max = 60s;
constexpr auto own_again_after = 5s;	// munged did not answer an own part
// Records being written at once: as many as the runs a writer holds.
constexpr std::size_t closing_max = 4096;

std::string file_name(const nlohmann::json &file)
{
	return "job-" + std::to_string(file.value("job", std::uint64_t{0})) + ".run-" +
	       std::to_string(file.value("run", 0u)) + ".jobwide.json";
}

std::string what_is(HelperAnswer::Is is)
{
	switch (is) {
	case HelperAnswer::Is::written:
		return "written";
	case HelperAnswer::Is::failed:
		return "failed";
	case HelperAnswer::Is::not_ended:
		return "not ended";
	case HelperAnswer::Is::refused:
		return "refused";
	case HelperAnswer::Is::no_answer:
		return "no answer";
	}
	return "unknown";
}

} // namespace

// A closed run whose record is being written, then its file.
struct JobwideIo::Closing {
	ClosedRun run;
	std::string segment;
	Clock::time_point until;	// asked again until then
	Clock::duration backoff{0};
	std::unique_ptr<asio::steady_timer> timer;
	bool told = false;	// its first failure was logged
};

JobwideIo::JobwideIo(asio::io_context &io, Daemon &daemon, Munged munged)
	: io_(io), daemon_(daemon), jobwide_(daemon.jobwide()), munged_(std::move(munged)),
	  own_user_(user_name(::geteuid())), tick_timer_(io)
{
}

JobwideIo::~JobwideIo()
{
	jobwide_.on_work({});
	*alive_ = false;
	listener_.reset();
	// What runs now ends within its deadline; what waits is dropped: a
	// restarted daemon resumes its runs from their journals.
	door_workers_.stop();
	slow_workers_.stop();
	door_workers_.join();
	slow_workers_.join();
}

template <class Work, class Done>
void JobwideIo::on_worker(asio::thread_pool &pool, Work work, Done done)
{
	asio::post(pool, [&io = io_, alive = alive_, work = std::move(work), done = std::move(done)]() mutable {
		auto result = work();
		asio::post(io, [alive = std::move(alive), done = std::move(done), result = std::move(result)]() mutable {
			if (*alive)
				done(std::move(result));
		});
	});
}

void JobwideIo::start()
{
	jobwide_.on_work([this] { poke(); });
	// Runs a previous daemon left waiting: those past their wait are
	// written now, the others wait on.
	for (ClosedRun &run : jobwide_.writer().resume(std::time(nullptr)))
		begin(std::move(run));
	resume_parts();
	door();	// before READY=1, when it can
	tick();
}

// Run ends whose part a previous daemon had not settled (jobwide_pending.hpp):
// taken again as the epilog gave them, unless their credential, sealed for
// send_for and a minute (at most munged's hour), has expired since.
void JobwideIo::resume_parts()
{
	std::vector<std::string> problems;
	const std::int64_t now = std::time(nullptr), lives = daemon_.config().policy.jobwide.part_ttl_s();
	for (const SavedEnd &s : load_pending(jobwide_.state_dir(), OutboxSettings{}.max_parts, problems)) {
		const RunEnd &e = s.end;
		if (now - s.saved_at > lives) {
			GOS_LOG(log::warning, "job-wide: job " << e.job << ": this node's part, saved " << now - s.saved_at
								<< " s ago, is dropped: its credential has expired");
			jobwide_.part_settled(e.job, e.start);
		} else if (auto refused = jobwide_.resume_end(e, now, Clock::now())) {
			GOS_LOG(log::warning, "job-wide: job " << e.job << ": this node's saved part is dropped: " << refused->why);
			jobwide_.part_settled(e.job, e.start);
		} else {
			GOS_LOG(log::notice, "job-wide: job " << e.job << ": this node's part, saved before the restart, goes on");
		}
	}
	for (const std::string &p : problems)
		GOS_LOG(log::warning, "job-wide: a saved part left as it is: " << p);
}

std::uint16_t JobwideIo::port() const
{
	return listener_ ? listener_->port() : 0;
}

void JobwideIo::door()
{
	const config::Config &cfg = daemon_.config();
	if (!cfg.policy.report_admin_comment) {
		if (listener_) {
			listener_.reset();
			GOS_LOG(log::notice, "job-wide: the door is closed: reports.admin_comment is off");
		}
		return;
	}
	if (listener_ || Clock::now() < door_again_)
		return;
	ListenerSettings s;
	s.address = cfg.start.jobwide_listen;
	s.port = cfg.start.jobwide_port;
	s.reserved_only = cfg.start.jobwide_reserved_ports;
	std::string where = (s.address.empty() ? "every address" : s.address) + ", port " + std::to_string(s.port);
	try {
		listener_ = std::make_unique<JobwideListener>(
			io_, door_workers_, s, jobwide_.writer(), jobwide_.nodes(), is_node_address, munged_.unseal, munged_.seal,
			[this](const jobwide::Frame &f, const jobwide::Payload &p) {
				GOS_LOG(log::notice, "job-wide: job " << p.job << ": a part from " << f.node
								 << " came after the record was made: kept in the file only");
				write_file({p.job, p.start}, false);
			},
			jobwide_.counts().door);
		GOS_LOG(log::notice, "job-wide: the door listens on " << where);
	} catch (const boost::system::system_error &e) {
		door_again_ = Clock::now() + door_again_after;
		GOS_LOG_LIMITED(door_log_, log::error, "job-wide: cannot listen on " << where << ": " << e.code().message()
										 << port_holders(s.port)
										 << "; nodes' parts are not taken here until it can (tried every 5 s; "
										    "senders believe no answer but this daemon's)");
	}
}

void JobwideIo::tick()
{
	tick_timer_.expires_after(tick_period);
	tick_timer_.async_wait([this](const boost::system::error_code &ec) {
		if (ec)
			return;
		pump();
		tick();
	});
}

void JobwideIo::poke()
{
	if (std::exchange(poked_, true))
		return;
	asio::post(io_, [this, alive = alive_] {
		if (*alive)
			pump();
	});
}

void JobwideIo::pump()
{
	poked_ = false;
	door();
	read_nodes();
	open_own();
	send_due();
	close_runs();
}

void JobwideIo::read_nodes()
{
	if (!daemon_.config().policy.report_admin_comment || reading_nodes_ || !jobwide_.nodes().due(Clock::now()))
		return;
	reading_nodes_ = true;
	on_worker(
		slow_workers_,
		[] {
			try {
				return parse_node_addrs(
					run_facts_program(slurm_facts_program_path(), {"--node-addrs"}, facts_deadline_s));
			} catch (const std::runtime_error &e) {
				NodeAddrs none;
				none.unavailable = e.what();
				return none;
			}
		},
		[this](NodeAddrs reading) {
			reading_nodes_ = false;
			if (!reading.unavailable.empty())
				GOS_LOG_LIMITED(nodes_log_, log::warning,
						"job-wide: Slurm's node table was not read: " << reading.unavailable);
			if (!reading.garbled.empty())
				GOS_LOG(log::warning, "job-wide: " << reading.garbled.size()
								   << " line(s) of the node table not understood, the first: "
								   << reading.garbled.front().substr(0, 200));
			jobwide_.nodes().take(std::move(reading), Clock::now());
		});
}

// This node's own parts: they came from its epilog on the root socket, so
// their sender is placed already; munged still checks the credential.
// Those munged could not open wait a while, and go once their run does.
void JobwideIo::open_own()
{
	if (Clock::now() < own_again_)
		return;
	for (Jobwide::OwnPart &own : jobwide_.take_own()) {
		on_worker(
			door_workers_,
			[f = own.frame, unseal = munged_.unseal] {
				return open_frame(f, {}, {}, [](const std::string &, const std::string &) { return true; },
						  unseal);
			},
			[this, own](Opened o) mutable {	// copies both: the two lambdas are made in no set order
				const jobwide::Frame &f = own.frame;
				// The writer's own part is where it goes once its run
				// holds it, or never will be: its saved end goes.
				auto settled = [&] {
					if (own.writes)
						jobwide_.part_settled(f.job, own.start);
				};
				auto again = [&] {
					own_again_ = Clock::now() + own_again_after;
					if (!jobwide_.writer().knows(f.job) || !jobwide_.own_again(own))
						settled();
				};
				if (o.again)
					return again();
				if (!o.refused.empty()) {
					GOS_LOG(log::error, "job-wide: job " << f.job << ": this node's own part was refused: "
									     << o.refused);
					return settled();
				}
				bool late = false;
				jobwide::Answer a = take_frame(jobwide_.writer(), f, o.payload, late);
				if (a.word == jobwide::Answer::Word::busy)
					return again();
				settled();
				if (a.word == jobwide::Answer::Word::refused)
					GOS_LOG(log::error, "job-wide: job " << f.job << ": this node's own part was not taken: "
									     << a.reason);
				else if (late)
					write_file({o.payload.job, o.payload.start}, false);
			});
	}
}

void JobwideIo::send_due()
{
	JobwideOutbox &box = jobwide_.outbox();
	auto now = Clock::now();
	std::string from;
	if (!jobwide_.self().empty() && box.held())
		from = jobwide_.nodes().address_of(jobwide_.self()).value_or("");
	for (const JobwideOutbox::Try &t : box.due(now)) {
		auto addr = jobwide_.nodes().address_of(*t.node);
		if (!addr) {
			box.heard(t.id, t.target, Heard::busy, "Slurm's node table has no NodeAddr for " + *t.node + " yet",
				  now);
			continue;
		}
		const config::StartSettings &start = daemon_.config().start;
		SendTo to{*addr, start.jobwide_port, from, std::chrono::duration_cast<std::chrono::milliseconds>(send_within),
			  start.jobwide_reserved_ports};
		// The writer's daemon runs as this one does (or as root, harnesses),
		// and answers for the part's own node.
		Believe believe{&door_workers_, munged_.unseal, {::geteuid(), 0},
				{static_cast<std::uint32_t>(t.part->job), t.part->start, t.part->node}};
		send_frame(io_, to, *t.frame, std::move(believe),
			   [this, alive = alive_, id = t.id, target = t.target](Heard heard, const std::string &why) {
				   if (!*alive)
					   return;
				   jobwide_.outbox().heard(id, target, heard, why, Clock::now());
				   poke();
			   });
	}
	for (const Ended &e : box.ended()) {
		jobwide_.part_settled(e.part.job, e.part.start);
		if (e.delivered) {
			jobwide_.counts().delivered++;
			// This node's own part, of a run it may stand by for: the
			// writer has it (a successor's own part goes to the writer only).
			if (e.part.successor.empty())
				jobwide_.writer().writer_took_own(e.part.job, e.part.start);
			continue;
		}
		jobwide_.counts().given_up++;
		GOS_LOG(log::error, "job-wide: job " << e.part.job << ": this node's part was not delivered to "
						     << e.part.writer << ": " << e.why);
	}
}

void JobwideIo::close_runs()
{
	for (ClosedRun &run : jobwide_.writer().due(std::time(nullptr)))
		begin(std::move(run));
}

// A run's wait is over: its record, if one is written, then its file. The
// records in flight are bounded as the runs are; past that a run gets its
// file only, and the log says so.
void JobwideIo::begin(ClosedRun run)
{
	auto c = std::make_shared<Closing>();
	c->run = std::move(run);
	c->until = Clock::now() + std::chrono::nanoseconds(daemon_.config().policy.jobwide.send_for_ns);
	if (!c->run.covers.empty())
		return stood_by(std::move(c));
	record(std::move(c));
}

// A successor's run: parts come here only when their senders could not
// reach the writer for failover_after. If none came but this node's own,
// and the writer took that one, the writer has them all. Otherwise the
// record is this node's to write once slurmctld holds the writer's node
// down (docs/jobwide.md, "Failures"): asked again with the record's
// backoff while it says up or nothing, for send_for (a node that just
// died is found down only after SlurmdTimeout).
void JobwideIo::stood_by(std::shared_ptr<Closing> c)
{
	const report::RunFacts &f = c->run.facts;
	std::size_t others = 0;
	for (const nlohmann::json &part : c->run.file.value("parts", nlohmann::json::array()))
		others += part.value("node", "") != f.writer;
	if (c->run.file_only || (!others && jobwide_.writer().writer_has_own(f.job, f.start))) {
		GOS_LOG(log::info, "job-wide: job " << f.job << " run " << f.run << ": stood by for " << c->run.covers
						    << "; the writer has every part");
		return dropped(c);
	}
	on_worker(
		slow_workers_,
		[node = c->run.covers] {
			try {
				return parse_node_state(
					run_facts_program(slurm_facts_program_path(), {"--node-state", node}, facts_deadline_s),
					node);
			} catch (const std::runtime_error &e) {
				NodeState none;
				none.unavailable = e.what();
				return none;
			}
		},
		[this, c, others](NodeState state) {
			const report::RunFacts &run = c->run.facts;
			if (state.down.value_or(false)) {
				GOS_LOG(log::notice, "job-wide: job " << run.job << " run " << run.run << ": the writer "
								     << c->run.covers << " is down (slurmctld): this node, its "
								     "successor, writes the record, " << c->run.record.parts
								     << " of " << c->run.record.n << " parts");
				return record(c);
			}
			if (Clock::now() >= c->until) {
				GOS_LOG(log::notice, "job-wide: job " << run.job << " run " << run.run << ": " << others
								     << " other node(s)' parts came here, the successor, but "
								     << (state.down ? "the writer " + c->run.covers + " stayed up: they are its"
										    : "slurmctld never said whether the writer " +
											      c->run.covers + " is down (" +
											      state.unavailable + ")")
								     << "; nothing is written here");
				return dropped(c);
			}
			later(c, &JobwideIo::stood_by);
		});
}

// A successor's run that is not written here: no record, no file.
void JobwideIo::dropped(std::shared_ptr<Closing> c)
{
	jobwide_.writer().drop(c->run.facts.job, c->run.facts.start);
}

void JobwideIo::later(std::shared_ptr<Closing> c, void (JobwideIo::*step)(std::shared_ptr<Closing>))
{
	c->backoff = std::clamp<Clock::duration>(c->backoff * 2, record_backoff_min, record_backoff_max);
	c->timer = std::make_unique<asio::steady_timer>(io_, c->backoff);
	c->timer->async_wait([this, alive = alive_, c, step](const boost::system::error_code &ec) {
		if (!ec && *alive)
			(this->*step)(c);
	});
}

void JobwideIo::record(std::shared_ptr<Closing> c)
{
	const config::Config &cfg = daemon_.config();
	c->until = Clock::now() + std::chrono::nanoseconds(cfg.policy.jobwide.send_for_ns);	// its own, after a stand-by
	c->backoff = Clock::duration{0};
	if (c->run.file_only || !cfg.policy.report_admin_comment)
		return recorded(std::move(c));
	if (closing_ >= closing_max) {
		jobwide_.counts().runs_unwritten++;
		GOS_LOG_LIMITED(closing_log_, log::error, "job-wide: job " << c->run.facts.job << ": no record written: "
				<< closing_ << " records are being written already; the job-wide file keeps every part");
		return recorded(std::move(c));
	}
	closing_++;
	c->segment = report::jobwide_segment(c->run.record);
	write_record(std::move(c));
}

void JobwideIo::write_record(std::shared_ptr<Closing> c)
{
	config::RecordHelper how = daemon_.config().policy.jobwide.record_helper;
	on_worker(
		slow_workers_,
		[how, user = own_user_, job = c->run.facts.job, start = c->run.facts.start, segment = c->segment] {
			if (how == config::RecordHelper::socket)
				return ask_record_helper(record_helper_socket, job, start, segment, helper_within);
			// direct (the daemon is root) and none (its user is an
			// Operator): the program runs as the daemon's own user.
			return ask_record_helper_spawned(slurm_facts_program_path(), user, job, start, segment,
							 helper_within);
		},
		[this, c](HelperAnswer a) {
			const report::RunFacts &f = c->run.facts;
			using Is = HelperAnswer::Is;
			if (a.is == Is::written) {
				closing_--;
				jobwide_.counts().runs_written++;
				GOS_LOG(log::notice, "job-wide: job " << f.job << " run " << f.run << ": record written, "
								     << c->run.record.parts << " of " << c->run.record.n
								     << " parts, " << c->segment.size() << " bytes");
				return recorded(c);
			}
			if (a.is == Is::refused || Clock::now() >= c->until) {
				closing_--;
				jobwide_.counts().runs_unwritten++;
				GOS_LOG(log::error, "job-wide: job " << f.job << " run " << f.run << ": no record written ("
								    << what_is(a.is) << ": " << a.line
								    << "); the job-wide file keeps every part");
				c->segment.clear();
				return recorded(c);
			}
			if (!std::exchange(c->told, true))
				GOS_LOG(log::warning, "job-wide: job " << f.job << " run " << f.run << ": record not written yet ("
								      << what_is(a.is) << ": " << a.line << "); asking again");
			later(c, &JobwideIo::write_record);
		});
}

// The record is written, or will not be: the file says which, and then
// the journal goes.
void JobwideIo::recorded(std::shared_ptr<Closing> c)
{
	const report::RunFacts &f = c->run.facts;
	jobwide_.writer().written(f.job, f.start, c->segment);
	c->run.file["field"] = c->segment;
	write_file({f.job, f.start}, true, std::move(c->run.file));
}

void JobwideIo::write_file(RunKey run, bool files, nlohmann::json fallback)
{
	auto [it, fresh] = filing_.try_emplace(run);
	Filing &w = it->second;
	if (!fresh) {	// one in flight: once more after it, as the writer then holds it
		w.again = true;
		w.again_files |= files;
		if (!fallback.is_null())
			w.fallback = std::move(fallback);
		return;
	}
	w.files = files;
	w.fallback = std::move(fallback);
	auto held = jobwide_.writer().file_of(run.first, run.second);
	nlohmann::json file = held ? std::move(*held) : w.fallback;
	if (file.is_null()) {	// neither held nor given: nothing to write
		filing_.erase(it);
		return;
	}
	on_worker(
		slow_workers_,
		[dir = daemon_.config().policy.report_dir, file = std::move(file)] {
			try {
				make_dirs(dir);
				write_file_atomically(dir + "/" + file_name(file), file.dump(1) + "\n", 0640);
				return std::string();
			} catch (const std::exception &e) {
				return std::string(e.what());
			}
		},
		[this, run](std::string error) {
			auto node = filing_.extract(run);
			Filing &done = node.mapped();
			if (!error.empty())
				GOS_LOG(log::error, "job-wide: job " << run.first << ": the job-wide file was not written ("
								     << error << "); its journal stays, for a restart to write it");
			else if (done.files)
				jobwide_.writer().filed(run.first, run.second);
			if (done.again)
				write_file(run, done.again_files, std::move(done.fallback));
		});
}

} // namespace gos::gpud
