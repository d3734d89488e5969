#include "daemon/gpud/jobwide.hpp"

#include <algorithm>
#include <cerrno>
#include <random>

#include "common/util/hostlist.hpp"

namespace gos::gpud {
namespace {

// The node table is read once at start, at a random point of the first
// minute (a cluster's daemons start together), and again on a miss at most
// this often.
constexpr auto node_table_first_within = std::chrono::seconds(60);
constexpr auto node_table_again_after = std::chrono::minutes(10);
// This node's own parts waiting to be opened: one per run that ends here,
// as many as the outbox holds to send.
constexpr std::size_t own_max = 1024;
const std::size_t outbox_settings_max = OutboxSettings{}.max_parts;

std::int64_t seconds_of(std::uint64_t ns)
{
	return static_cast<std::int64_t>(ns / 1'000'000'000ULL);
}

double draw()
{
	static thread_local std::mt19937_64 bits{std::random_device{}()};
	return std::uniform_real_distribution<double>(0, 1)(bits);
}

} // namespace

WriterSettings writer_settings(const config::Config &cfg)
{
	const config::Jobwide &j = cfg.policy.jobwide;
	WriterSettings s;
	s.state_dir = cfg.start.state_dir;
	s.wait_s = seconds_of(j.wait_ns);
	s.failover_after_s = seconds_of(j.failover_after_ns);
	s.keep_s = seconds_of(j.keep_ns);
	s.max_nodes = static_cast<std::size_t>(j.max_nodes);
	return s;
}

OutboxSettings outbox_settings(const config::Config &cfg)
{
	const config::Jobwide &j = cfg.policy.jobwide;
	OutboxSettings s;
	s.failover_after = std::chrono::seconds(seconds_of(j.failover_after_ns));
	s.send_for = std::chrono::seconds(seconds_of(j.send_for_ns));
	return s;
}

Jobwide::Jobwide(const config::Config &cfg, Logger log)
	: on_(cfg.policy.report_admin_comment), state_dir_(cfg.start.state_dir), log_(log), writer_(writer_settings(cfg), log), outbox_(outbox_settings(cfg), draw),
	  nodes_(Clock::now(), std::chrono::duration_cast<Clock::duration>(node_table_first_within * draw()),
		 node_table_again_after)
{
}

void Jobwide::configure(const config::Config &cfg)
{
	on_ = cfg.policy.report_admin_comment;
	writer_.configure(writer_settings(cfg));
	outbox_.configure(outbox_settings(cfg));
}

std::optional<Refusal> Jobwide::run_end(const RunEnd &end, std::int64_t now, Clock::time_point mono)
{
	return take_end(end, now, mono, true);
}

void Jobwide::part_settled(std::uint64_t job, std::int64_t start)
{
	try {
		drop_pending(state_dir_, job, start);
	} catch (const std::runtime_error &e) {
		log_(std::string("job-wide: job ") + std::to_string(job) + ": its saved part stays: " + e.what());
	}
}

std::optional<Refusal> Jobwide::take_end(const RunEnd &end, std::int64_t now, Clock::time_point mono, bool save)
{
	if (!on_)
		return Refusal{-ENOTSUP, "the job-wide channel is off on this node (reports.admin_comment)"};
	if (!end.job || end.job > UINT32_MAX || end.start <= 0 || !end.num_nodes)
		return Refusal{-EINVAL, "a run's end needs a job id below 2^32, its start and its number of nodes"};
	if (!jobwide::valid_node(end.node))
		return Refusal{-EINVAL, "SLURMD_NODENAME is not a node name the channel carries: 1 to 64 of [A-Za-z0-9._-]"};
	// The epilog is root's: its list is bounded by the request (64 KiB)
	// and by the expansion's own cap. A name the channel cannot carry
	// could never send a part, nor be named in the file.
	std::vector<std::string> nodes;
	try {
		nodes = expand_hostlist(end.nodelist);
	} catch (const HostlistError &e) {
		return Refusal{-EINVAL, std::string("SLURM_NODELIST: ") + e.what()};
	}
	if (!std::all_of(nodes.begin(), nodes.end(), [](const std::string &n) { return jobwide::valid_node(n); }))
		return Refusal{-EINVAL, "SLURM_NODELIST names a node the channel cannot carry: 1 to 64 of [A-Za-z0-9._-]"};
	if (std::find(nodes.begin(), nodes.end(), end.node) == nodes.end())
		return Refusal{-EINVAL, "SLURMD_NODENAME " + end.node + " is not in SLURM_NODELIST"};
	// The writer is the list's first node, its successor the second
	// (docs/jobwide.md, "One writer per run"): each node knows both from
	// its own epilog, no node asking another.
	const std::string &writer = nodes.front();
	const std::string successor = nodes.size() > 1 ? nodes[1] : "";
	const bool writes = writer == end.node;
	bool stands_by = successor == end.node;
	// Everything is checked before anything is held: a refused run end
	// leaves nothing behind.
	jobwide::Frame frame;
	if (!end.frame.empty()) {
		const auto *bytes = reinterpret_cast<const std::uint8_t *>(end.frame.data());
		if (auto why = jobwide::decode_frame({bytes, end.frame.size()}, frame))
			return Refusal{-EINVAL, "the part's frame does not read: " + *why};
		if (frame.node != end.node || frame.job != end.job)
			return Refusal{-EINVAL, "the part's frame names node " + frame.node + " and job " +
							std::to_string(frame.job) + ", not this node and job"};
		if (writes && own_.size() >= own_max)
			return Refusal{-EBUSY, "this node holds " + std::to_string(own_max) + " of its own parts to open already"};
		if (!writes && outbox_.held() >= outbox_settings_max)
			return Refusal{-EBUSY, "this node holds as many parts to send as it may"};
	}
	// Saved before anything is held or answered: the epilog returns at
	// once, and a part only in memory would go with a restart.
	if (save && !end.frame.empty()) {
		try {
			save_pending(state_dir_, end, now);
		} catch (const std::runtime_error &e) {
			return Refusal{-EIO, std::string("the part could not be saved: ") + e.what()};
		}
	}
	const report::RunFacts facts{end.job, end.run, end.start, end.node, end.num_nodes, 0};
	if (writes)
		if (auto why = writer_.expect(facts, end.nodelist, now)) {
			if (save && !end.frame.empty())
				part_settled(end.job, end.start);	// refused: nothing is held
			return Refusal{-EBUSY, "the run is not written here: " + *why};
		}
	// Standing by is the successor's extra: when it cannot, its part still
	// goes to the writer, as any other node's.
	if (stands_by && !end.frame.empty() && own_.size() >= own_max) {
		log_("job-wide: job " + std::to_string(end.job) + ": this node does not stand by for its writer " + writer +
		     ": it holds " + std::to_string(own_max) + " of its own parts to open already");
		stands_by = false;
	} else if (stands_by) {
		if (auto why = writer_.expect(facts, end.nodelist, now)) {
			log_("job-wide: job " + std::to_string(end.job) + ": this node does not stand by for its writer " +
			     writer + ": " + *why);
			stands_by = false;
		}
	}
	self_ = end.node;
	if (!end.frame.empty()) {
		++counts_.run_ends;	// once per run: on Slurm 22.05 a frameless end comes first
		// The successor keeps its own part for the run it stands by for,
		// and sends it to the writer as every other node does.
		if (writes || stands_by)
			own_.push_back({std::move(frame), end.start, writes});
		if (!writes) {
			outbox_.add({end.job, end.start, writer, stands_by ? "" : successor, end.frame, end.node}, mono);
			++counts_.queued;
		}
	}
	poke();
	return std::nullopt;
}

std::deque<Jobwide::OwnPart> Jobwide::take_own()
{
	return std::exchange(own_, {});
}

bool Jobwide::own_again(OwnPart part)
{
	if (own_.size() >= own_max)
		return false;
	own_.push_back(std::move(part));
	return true;
}

} // namespace gos::gpud
