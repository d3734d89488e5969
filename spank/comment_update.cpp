#include "spank/comment_update.hpp"

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "common/compat/slurm.hpp"
#include "common/report/admin_comment.hpp"

namespace gos::spank {
namespace {

using namespace gos::report;

using Clock = std::chrono::steady_clock;
constexpr int max_attempts = 12;
// The longest pause between two attempts: a round lets at least one of the
// nodes that collided through, so the more nodes, the wider they spread.
constexpr int max_jitter_ms = 3000;

struct JobRecord {
	bool ok = false;
	std::string comment, error;
	unsigned restarts = 0;
	std::vector<std::string> nodes;
};

std::vector<std::string> node_names(const char *list)
{
	std::vector<std::string> names;
	if (!list || !*list)
		return names;
	auto hl = slurm_hostlist_create(list);	// hostlist_t, or a pointer to it from 24.11
	if (!hl)
		return names;
	for (char *n; (n = slurm_hostlist_shift(hl));) {
		names.emplace_back(n);
		free(n);
	}
	slurm_hostlist_destroy(hl);
	return names;
}

JobRecord load(std::uint64_t job)
{
	JobRecord r;
	job_info_msg_t *msg = nullptr;
	if (gos::slurm::load_job(&msg, static_cast<std::uint32_t>(job), SHOW_DETAIL) != SLURM_SUCCESS || !msg ||
	    msg->record_count < 1) {
		r.error = std::string("reading the job: ") + slurm_strerror(gos::slurm::last_errno());
		if (msg)
			slurm_free_job_info_msg(msg);
		return r;
	}
	const slurm_job_info_t &j = msg->job_array[0];
	r.ok = true;
	r.comment = j.admin_comment ? j.admin_comment : "";
	r.restarts = j.restart_cnt;
	r.nodes = node_names(j.nodes);
	slurm_free_job_info_msg(msg);
	return r;
}

std::string store(std::uint64_t job, const std::string &field)
{
	job_desc_msg_t desc;
	slurm_init_job_desc_msg(&desc);
	gos::slurm::set_job_id(desc, static_cast<std::uint32_t>(job));
	desc.admin_comment = const_cast<char *>(field.c_str());
	if (slurm_update_job(&desc) != SLURM_SUCCESS)
		return std::string("writing AdminComment: ") + slurm_strerror(gos::slurm::last_errno());
	return "";
}

// The run a part is of. slurmstepd sets the step's SLURM_RESTART_COUNT
// only from the first requeue on (and Slurm's S_SLURM_RESTART_COUNT item is
// never filled in, 22.05 to 24.11), so before it the step sees whatever the
// job's user exported (issue 31, finding 8). It is taken only where
// slurmctld's count allows it: this run, or the one before it when a
// requeue as the step ended has already counted the next.
unsigned run_of(int step_run, unsigned restarts)
{
	if (step_run < 0 || static_cast<unsigned>(step_run) > restarts || static_cast<unsigned>(step_run) + 1 < restarts)
		return restarts;
	return static_cast<unsigned>(step_run);
}

} // namespace

CommentOutcome put_node_part(std::uint64_t job, const Report &report, const PartOf &who, unsigned pause_ms)
{
	CommentOutcome out;
	std::mt19937 rng(std::random_device{}());
	for (out.attempts = 1; out.attempts <= max_attempts; out.attempts++) {
		auto began = Clock::now();
		JobRecord rec = load(job);
		if (!rec.ok) {
			out.error = rec.error;
			return out;
		}
		nlohmann::json part = node_part(report, who.node, run_of(who.run, rec.restarts));
		AdminComment c = split_admin_comment(rec.comment);
		merge_part(c.ours, part, who.job_nodes.empty() ? rec.nodes : node_names(who.job_nodes.c_str()));
		if (pause_ms)
			std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
		if (std::string e = store(job, join_admin_comment(c)); !e.empty()) {
			out.error = e;
			return out;	// refused (the job finished, say): retrying will not help
		}
		// A writer that read before our write writes within about its own
		// window; ours is the measure, doubled, with jitter so that the
		// losers of one round do not meet again in the next.
		auto window = Clock::now() - began;
		int spread = 100 * out.attempts * std::max<int>(1, static_cast<int>(rec.nodes.size() + 2) / 3);
		std::uniform_int_distribution<int> jitter(20, std::min(spread, max_jitter_ms));
		std::this_thread::sleep_for(2 * window + std::chrono::milliseconds(jitter(rng)));
		JobRecord check = load(job);
		if (check.ok && holds_part(split_admin_comment(check.comment).ours, part)) {
			out.ok = true;
			return out;
		}
	}
	out.attempts = max_attempts;
	out.error = "AdminComment kept being overwritten by other nodes; gave up after " + std::to_string(max_attempts) +
		    " attempts";
	return out;
}

std::vector<std::string> wait_for_all_parts(std::uint64_t job, std::chrono::milliseconds limit)
{
	auto deadline = Clock::now() + limit;
	std::vector<std::string> missing;
	for (;;) {
		JobRecord rec = load(job);
		if (!rec.ok)
			return missing;
		missing.clear();
		for (const auto &n : split_admin_comment(rec.comment).ours.value("missing", nlohmann::json::array()))
			missing.push_back(n.get<std::string>());
		if (missing.empty() || Clock::now() >= deadline)
			return missing;
		std::this_thread::sleep_for(std::chrono::milliseconds(200));
	}
}

} // namespace gos::spank
