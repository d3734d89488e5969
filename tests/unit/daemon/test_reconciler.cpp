// The reconciler's rules in process: when a job is gone, on the node's word
// or on Slurm's, how a task is told from a process that reused its pid, and
// its two settings.
#define BOOST_TEST_MODULE reconciler
#include <boost/test/unit_test.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include "common/config/config.hpp"
#include "daemon/gpud/reconciler.hpp"

using namespace gos::gpud;

namespace {

Job job_with_tasks(std::size_t tasks, std::int64_t registered)
{
	Job job;
	job.id = 7;
	job.registered = registered;
	for (std::size_t i = 0; i < tasks; i++)
		job.tasks[static_cast<pid_t>(1000 + i)] = Task{1, 0};
	return job;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_job_with_any_sign_of_life_is_not_gone)
{
	Job job = job_with_tasks(2, 100);
	BOOST_TEST(!gone_because(job, {true, false, false}, 1000, 30));
	BOOST_TEST(!gone_because(job, {false, true, false}, 1000, 30));
	BOOST_TEST(!gone_because(job, {false, false, true}, 1000, 30));
	auto why = gone_because(job, {}, 1000, 30);
	BOOST_REQUIRE(why);
	BOOST_TEST(*why == "none of its 2 task(s) is alive, no process is in its cgroup and no agent of it is connected");
}

BOOST_AUTO_TEST_CASE(nothing_is_gone_within_the_grace_of_its_last_registration)
{
	Job job = job_with_tasks(0, 100);
	BOOST_TEST(!gone_because(job, {}, 129, 30));	// its tasks may be on their way
	auto why = gone_because(job, {}, 130, 30);
	BOOST_REQUIRE(why);
	BOOST_TEST(*why == "no task was registered within 30 s of its step, and no process is in its cgroup");
}

BOOST_AUTO_TEST_CASE(an_ended_job_is_not_ended_again)
{
	Job job = job_with_tasks(1, 100);
	job.ended = 200;
	BOOST_TEST(!gone_because(job, {}, 1000, 0));
}

BOOST_AUTO_TEST_CASE(a_job_slurm_has_ended_is_gone_after_the_grace_whatever_is_left_of_it)
{
	Job job = job_with_tasks(1, 100);
	SlurmJob done{SlurmJob::Is::finished, "COMPLETED", 500, "", std::nullopt, std::nullopt, ""};
	BOOST_TEST(!gone_in_slurm(job, done, 529, 30));	// Slurm may be a moment ahead of the epilog
	auto why = gone_in_slurm(job, done, 530, 30);
	BOOST_REQUIRE(why);
	BOOST_TEST(*why == "Slurm: job 7 is COMPLETED");
	SlurmJob purged{SlurmJob::Is::finished, "unknown to slurmctld", 500, "", std::nullopt, std::nullopt, ""};
	BOOST_TEST(*gone_in_slurm(job, purged, 530, 30) == "Slurm: job 7 is unknown to slurmctld");
	Job fresh = job_with_tasks(1, 520);	// registered again since
	BOOST_TEST(!gone_in_slurm(fresh, done, 530, 30));
	job.ended = 510;
	BOOST_TEST(!gone_in_slurm(job, done, 1000, 30));
}

BOOST_AUTO_TEST_CASE(nothing_is_gone_on_slurms_word_while_it_runs_is_unread_or_unreachable)
{
	Job job = job_with_tasks(1, 100);
	BOOST_TEST(!gone_in_slurm(job, {SlurmJob::Is::running, "RUNNING", 0, "", std::nullopt, std::nullopt, ""}, 1000, 30));
	BOOST_TEST(!gone_in_slurm(job, {}, 1000, 30));
	BOOST_TEST(!gone_in_slurm(job, {SlurmJob::Is::unreachable, "", 0, "slurmctld: Unable to contact slurm controller", std::nullopt, std::nullopt, ""},
				  1000, 30));
}

BOOST_AUTO_TEST_CASE(a_task_is_its_pid_and_its_start)
{
	auto mine = process_start(::getpid());
	BOOST_REQUIRE(mine);
	ProcProbe probe;
	BOOST_TEST(probe.task_alive(::getpid(), *mine));
	BOOST_TEST(probe.task_alive(::getpid(), 0));		// start unknown
	BOOST_TEST(!probe.task_alive(::getpid(), *mine + 1));	// the pid reused by another process

	pid_t child = ::fork();
	if (child == 0)
		::_exit(0);
	// A zombie is no task: wait until the child is one, then reap it.
	siginfo_t info{};
	BOOST_REQUIRE(::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT) == 0);
	BOOST_TEST(!process_start(child));
	::waitpid(child, nullptr, 0);
	BOOST_TEST(!process_start(child));
	BOOST_TEST(!probe.task_alive(child, 0));
}

BOOST_AUTO_TEST_CASE(the_settings_are_read_and_checked)
{
	using gos::config::parse_config;
	auto cfg = parse_config("reconcile: {period: 10s, grace: 0s}\n", "p.yaml");
	BOOST_TEST(cfg.policy.reconcile_period_ns == 10'000'000'000ULL);
	BOOST_TEST(cfg.policy.stale_grace_ns == 0u);
	auto defaults = parse_config("", "p.yaml");
	BOOST_TEST(defaults.policy.reconcile_period_ns == 60'000'000'000ULL);
	BOOST_TEST(defaults.policy.stale_grace_ns == 30'000'000'000ULL);
	BOOST_CHECK_EXCEPTION(parse_config("reconcile: {period: 0s}\n", "p.yaml"), gos::config::ConfigError,
			      [](const auto &e) { return std::string(e.what()).find("'reconcile.period' must be") != std::string::npos; });
	BOOST_CHECK_EXCEPTION(parse_config("reconcile: {every: 1s}\n", "p.yaml"), gos::config::ConfigError,
			      [](const auto &e) { return std::string(e.what()).find("unknown key 'every' in 'reconcile'") != std::string::npos; });
}
