// gpuoversubd on a full disk (issue 13, smaller items): a step or task
// registration whose record cannot be saved is refused, not answered
// success and lost by the next restart, and nothing of it stays (in
// memory, in the engine, on disk: issue 25); a report that cannot be written is retried every
// second but its error is logged once, not every second.
#define BOOST_TEST_MODULE daemon_files
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/util/regular_file.hpp"
#include "daemon_harness.hpp"

using namespace gos_test;

namespace {

// A 64 KiB tmpfs over DIR, mounted before the daemon starts (it holds its
// directories open from then on), filled to the last block by fill();
// unmounted on scope exit.
struct FullDisk {
	std::string dir, filler;
	explicit FullDisk(const std::string &d) : dir(d), filler(d + "/filler")
	{
		::mkdir(dir.c_str(), 0755);	// the report directory may not be made yet
		BOOST_REQUIRE_MESSAGE(::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=64k,mode=0700") == 0,
				      "mount tmpfs on " << dir << ": " << std::strerror(errno));
	}
	void fill()
	{
		int fd = ::open(filler.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		BOOST_REQUIRE(fd >= 0);
		std::vector<char> block(4096, 'x');
		while (::write(fd, block.data(), block.size()) > 0)
			;
		BOOST_REQUIRE(errno == ENOSPC);
		::close(fd);
	}
	void free_space() { ::unlink(filler.c_str()); }
	~FullDisk() { ::umount2(dir.c_str(), MNT_DETACH); }
};

std::size_t count(const std::string &text, const std::string &what)
{
	std::size_t n = 0;
	for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1))
		n++;
	return n;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_registration_that_cannot_be_saved_is_refused)
{
	DaemonUnderTest d("", false);
	FullDisk disk(d.state_dir);
	d.start();
	disk.fill();
	gos_req_step s{};
	s.job_id = 41;
	s.ngpus = 1;
	std::string why;
	BOOST_TEST(d.request(GOS_REQ_STEP_REGISTER, &s, sizeof s, &why) != 0);
	BOOST_TEST(why == "job 41 not saved, so not registered: cannot write " + d.state_dir +
				  "/job-41.json: No space left on device");
	BOOST_TEST(d.ask(GOS_REQ_JOBS).empty());	// undone: no tenant, no job
	disk.free_space();
	BOOST_CHECK_NO_THROW(d.register_step(41));
	BOOST_TEST(d.ask(GOS_REQ_JOBS).size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_task_registration_that_cannot_be_saved_is_refused_and_undone)
{
	DaemonUnderTest d("", false);
	FullDisk disk(d.state_dir);
	d.start();
	d.register_step(43);
	disk.fill();
	gos_req_task t{};
	t.job_id = 43;
	t.pid = static_cast<std::uint32_t>(::getpid());
	std::string why;
	BOOST_TEST(d.request(GOS_REQ_TASK_REGISTER, &t, sizeof t, &why) == -EIO);
	BOOST_TEST(why == "task " + std::to_string(::getpid()) + " not saved, so not registered: cannot write " + d.state_dir +
				  "/job-43.json: No space left on device");
	BOOST_TEST(d.ask(GOS_REQ_JOBS).at(0).at("tasks") == 0);	// not half-applied
	disk.free_space();
	BOOST_CHECK_NO_THROW(d.register_task(43, ::getpid()));
	BOOST_TEST(d.ask(GOS_REQ_JOBS).at(0).at("tasks") == 1);
}

// A second step brings a GPU the job did not have: refused, the job keeps
// its one step and GPU, the new GPU's tenant goes, and a daemon killed then
// resumes the job as it was.
BOOST_AUTO_TEST_CASE(a_step_that_cannot_be_saved_leaves_its_job_as_it_was)
{
	DaemonUnderTest d("simulated_gpus:\n  - {memory: 1G, numa_node: 0, pci_bus_id: '0000:17:00.0'}\n"
			  "  - {memory: 1G, numa_node: 0, pci_bus_id: '0000:18:00.0'}\n", false);
	FullDisk disk(d.state_dir);
	d.start();
	d.register_step(44);
	const std::string record = d.state_dir + "/job-44.json";
	const std::string saved = gos::read_regular_file(record, {1 << 20, true});
	disk.fill();
	gos_req_step s{};
	s.job_id = 44;
	s.step_id = 1;
	s.ngpus = 1;
	s.gpus[0] = 1;
	std::string why;
	BOOST_TEST(d.request(GOS_REQ_STEP_REGISTER, &s, sizeof s, &why) == -EIO);
	BOOST_TEST(why == "job 44 not saved, so not registered: cannot write " + record + ": No space left on device");
	auto job = d.ask(GOS_REQ_JOBS).at(0);
	BOOST_TEST(job.at("steps") == 1, job.dump());
	BOOST_TEST(job.at("gpus") == nlohmann::json::array({0}), job.dump());
	BOOST_TEST(d.tenant(44, 1).is_null());	// the engine has no tenant of it on GPU 1
	BOOST_TEST(!d.tenant(44, 0).is_null());
	BOOST_TEST(gos::read_regular_file(record, {1 << 20, true}) == saved);

	BOOST_REQUIRE(WIFSIGNALED(d.stop(SIGKILL)));
	disk.free_space();
	d.start();
	job = d.ask(GOS_REQ_JOBS).at(0);
	BOOST_TEST(job.at("steps") == 1, job.dump());
	BOOST_TEST(job.at("gpus") == nlohmann::json::array({0}), job.dump());
	BOOST_TEST(d.tenant(44, 1).is_null());
	BOOST_REQUIRE(d.request(GOS_REQ_STEP_REGISTER, &s, sizeof s) == 0);	// with room, it is registered
	BOOST_TEST(d.ask(GOS_REQ_JOBS).at(0).at("gpus") == nlohmann::json::array({0, 1}));
	BOOST_TEST(!d.tenant(44, 1).is_null());
}

BOOST_AUTO_TEST_CASE(a_pending_report_logs_its_error_once_not_every_second)
{
	DaemonUnderTest d("", false);
	FullDisk disk(d.report_dir);
	d.start();
	d.register_step(42);
	disk.fill();
	d.end_step(42);
	const std::string line = "report for job 42 not written";
	BOOST_REQUIRE(eventually([&] { return count(d.log(), line) >= 1; }));
	// An observation window, not a wait: checkpoints retry every second,
	// and none of the next three may log again.
	std::this_thread::sleep_for(std::chrono::milliseconds(3500));
	BOOST_TEST(count(d.log(), line) == 1u, d.log());
	disk.free_space();	// the next retry writes it
	BOOST_TEST(eventually([&] { return d.ask(GOS_REQ_JOBS).empty(); }));
}

// Under the unit's ProtectSystem=strict every path but the unit's own and
// its ReadWritePaths= is read-only: a policy that puts a directory there is
// refused at start, the directory named with the remedy (issue 32).
BOOST_AUTO_TEST_CASE(a_directory_on_a_read_only_file_system_is_refused_by_name)
{
	DaemonUnderTest d("", false);
	::mkdir(d.report_dir.c_str(), 0755);
	BOOST_REQUIRE_MESSAGE(::mount("tmpfs", d.report_dir.c_str(), "tmpfs", MS_RDONLY, "size=64k") == 0,
			      "mount a read-only tmpfs on " << d.report_dir << ": " << std::strerror(errno));
	struct Unmount {
		std::string dir;
		~Unmount() { ::umount2(dir.c_str(), MNT_DETACH); }
	} unmount{d.report_dir};
	std::string why;
	try {
		d.start();
	} catch (const std::exception &e) {
		why = e.what();
	}
	BOOST_TEST(why.find("the report directory " + d.report_dir + " is on a read-only file system") != std::string::npos, why);
	BOOST_TEST(why.find("[Service] ReadWritePaths=" + d.report_dir) != std::string::npos, why);
}
