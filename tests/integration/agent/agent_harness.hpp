// Real programs under the real agent: tests/tools/gos_testapp started with
// libgpuoversub.so preloaded and the fake driver (tests/fakecuda) as
// libcuda.so.1, registered as a task of a job before it runs, and driven
// one command line at a time.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gos_test {

class DaemonUnderTest;

// BUILD (default build) made absolute, with relative appended.
std::string build_path(const std::string &relative);

// The fake GPU that every AppProcess of one test shares.
struct FakeGpu {
	explicit FakeGpu(std::uint64_t capacity, std::string dir);
	std::uint64_t capacity;
	std::string state;	// FAKECUDA_STATE
	std::string calls;	// FAKECUDA_LOG
	std::vector<std::pair<std::string, std::string>> env;	// extra variables for every app
};

class AppProcess {
public:
	// job 0: not registered with the daemon (an unmanaged process).
	AppProcess(DaemonUnderTest *daemon, std::uint64_t job, const FakeGpu &gpu, const std::string &via = "direct",
		   std::vector<std::pair<std::string, std::string>> env = {});
	~AppProcess();
	AppProcess(const AppProcess &) = delete;
	AppProcess &operator=(const AppProcess &) = delete;

	// Sends one command; returns its reply line ("" on timeout).
	std::string cmd(const std::string &line, std::chrono::milliseconds limit = std::chrono::seconds(15));
	bool ok(const std::string &line) { return cmd(line).rfind("ok", 0) == 0; }
	// "where NAME" as numbers: bytes on the device and on the host.
	std::pair<std::uint64_t, std::uint64_t> where(const std::string &name);
	void signal(int sig);
	// Its exit status, or -1 if it has not exited within limit.
	int wait(std::chrono::milliseconds limit = std::chrono::seconds(10));
	std::string errors() const;	// what it wrote to stderr
	pid_t pid() const { return pid_; }

private:
	pid_t pid_ = -1;
	int in_fd_ = -1, out_fd_ = -1;
	std::string err_path_, buffered_;
};

} // namespace gos_test
