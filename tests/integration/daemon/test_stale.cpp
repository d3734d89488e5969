// No stale jobs (issue 13, finding 5): a crash during job end, jobs whose
// JOB_END never came, registrations the plugin gave up on. A real daemon,
// and tasks that are real processes, alive or gone.
#define BOOST_TEST_MODULE stale
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>

#include "common/proto/client.hpp"
#include "daemon_harness.hpp"

using namespace gos_test;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t GiB = 1ULL << 30;

// A task that runs until end(): registered while it lives (the daemon
// refuses a pid of no process), then exited and waited for.
class ShortTask {
public:
	ShortTask()
	{
		int fds[2];
		BOOST_REQUIRE(::pipe(fds) == 0);
		pid_ = ::fork();
		BOOST_REQUIRE(pid_ >= 0);
		if (pid_ == 0) {
			::close(fds[1]);
			char c;
			while (::read(fds[0], &c, 1) < 0 && errno == EINTR) {
			}
			::_exit(0);	// the parent closed its end
		}
		::close(fds[0]);
		release_ = fds[1];
	}
	~ShortTask() { end(); }
	pid_t pid() const { return pid_; }
	void end()
	{
		if (release_ < 0)
			return;
		::close(release_);
		release_ = -1;
		::waitpid(pid_, nullptr, 0);
	}

private:
	pid_t pid_ = -1;
	int release_ = -1;
};

bool exists(const std::string &path)
{
	struct stat st{};
	return ::stat(path.c_str(), &st) == 0;
}

nlohmann::json report(const DaemonUnderTest &d, std::uint64_t job)
{
	std::ifstream in(d.report_dir + "/job-" + std::to_string(job) + ".json");
	return nlohmann::json::parse(in, nullptr, false);
}

int job_end(DaemonUnderTest &d, std::uint64_t job)
{
	gos_req_job req{job};
	return d.request(GOS_REQ_JOB_END, &req, sizeof req);
}

bool running(DaemonUnderTest &d, std::uint64_t job)
{
	for (const auto &j : d.ask(GOS_REQ_JOBS))
		if (j["job"] == job && !j["report_pending"].get<bool>())
			return true;
	return false;
}

} // namespace

// The daemon kills itself (SIGKILL, as kill -9 would) right after writing
// the report, before removing the job's record.
BOOST_AUTO_TEST_CASE(a_kill9_between_report_and_record_resumes_the_job_ended)
{
	DaemonUnderTest d("", false);
	::setenv("GPUOVERSUBD_FAULT", "kill-after-report", 1);
	d.start();
	::unsetenv("GPUOVERSUBD_FAULT");
	d.register_step(3);
	d.register_task(3, ::getpid());
	BOOST_REQUIRE_THROW(job_end(d, 3), std::exception);	// no answer: the daemon died
	int st = d.stop(0);
	BOOST_REQUIRE(WIFSIGNALED(st));
	BOOST_REQUIRE_EQUAL(WTERMSIG(st), SIGKILL);
	BOOST_REQUIRE(exists(d.report_dir + "/job-3.json"));
	BOOST_REQUIRE(exists(d.state_dir + "/job-3.json"));	// the crash left the record

	d.start();
	BOOST_TEST(!running(d, 3));
	BOOST_TEST(d.tenant(3).is_null());	// counts in no share
	BOOST_TEST(eventually([&] { return !exists(d.state_dir + "/job-3.json"); }));
	BOOST_TEST(job_end(d, 3) == 0);		// the epilog's retry
	BOOST_TEST(job_end(d, 4) == -ENOENT);	// a job never seen here
	BOOST_TEST(report(d, 3)["job"] == 3);
}

BOOST_AUTO_TEST_CASE(jobs_gone_without_a_job_end_are_reaped_and_reported)
{
	DaemonUnderTest d("reconcile: {period: 100ms, grace: 1s}\n");
	ShortTask task;
	d.register_step(1);			// its task exited, its JOB_END never came
	d.register_task(1, task.pid());
	task.end();
	d.register_step(2);			// a registration the plugin gave up on
	d.register_step(5);			// alive
	d.register_task(5, ::getpid());
	BOOST_TEST(eventually([&] { return exists(d.report_dir + "/job-1.json") && exists(d.report_dir + "/job-2.json"); },
			      10s));
	std::string one = report(d, 1)["end_reason"], two = report(d, 2)["end_reason"];
	BOOST_TEST(one.rfind("reaped: none of its 1 task(s) is alive", 0) == 0, one);
	BOOST_TEST(two.rfind("reaped: no task was registered", 0) == 0, two);
	BOOST_TEST(!running(d, 1));
	BOOST_TEST(!running(d, 2));
	BOOST_TEST(running(d, 5));
	BOOST_TEST(!exists(d.report_dir + "/job-5.json"));
	BOOST_TEST(d.log().find("job 1 reaped: ") != std::string::npos);
}

// The case: 262 jobs whose tasks are gone, on a GPU they would
// split 263 ways. A new job with a factor of 2 gets twice the whole GPU.
BOOST_AUTO_TEST_CASE(stale_jobs_never_shrink_a_new_jobs_limit)
{
	DaemonUnderTest d("reconcile: {period: 1h, grace: 1h}\n");
	ShortTask task;
	for (std::uint64_t job = 100; job < 362; job++) {
		d.register_step(job);
		d.register_task(job, task.pid());
	}
	task.end();
	BOOST_REQUIRE_EQUAL(d.status()["jobs"], 262);
	// Past their grace now: a reload makes it 0.
	d.write_policy("reconcile: {period: 1h, grace: 0s}\n");
	d.signal(SIGHUP);
	BOOST_REQUIRE(eventually([&] { return d.log().find("reload: policy") != std::string::npos; }));
	auto begun = std::chrono::steady_clock::now();
	d.register_step(1, {0}, 0, 2000);
	// Reaping them waits for no report: far within the plugin's 5 s,
	// even on a loaded machine.
	auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - begun);
	BOOST_TEST(took.count() < 2000);
	d.register_task(1, ::getpid());
	BOOST_TEST(d.status()["gpus"][0]["tenants"].size() == 1u);
	BOOST_TEST(d.tenant(1)["limit"].get<std::uint64_t>() == 2 * GiB);
	BOOST_TEST(!running(d, 100));
	BOOST_TEST(eventually([&] { return exists(d.report_dir + "/job-100.json"); }));
}
