// Real processes for daemon tests: a gpuoversubd started from the build
// with a private policy and simulated GPUs, and agent processes forked from
// the test that speak the wire protocol like the real agent will.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <gpuoversub/abi.h>

namespace gos_test {

class DaemonUnderTest {
public:
	// extra_yaml is appended to a policy with a private socket, state and
	// report directories and one simulated 1 GiB GPU (unless it sets its own).
	explicit DaemonUnderTest(const std::string &extra_yaml, bool start_now = true);
	~DaemonUnderTest();
	DaemonUnderTest(const DaemonUnderTest &) = delete;
	DaemonUnderTest &operator=(const DaemonUnderTest &) = delete;

	void start();			// waits until the socket answers
	void spawn();			// starts it and returns at once
	int stop(int sig);		// returns the exit status
	void signal(int sig);
	bool running() const { return pid_ > 0; }
	std::string log() const;	// what the daemon wrote to stderr
	void write_policy(const std::string &extra_yaml);

	nlohmann::json ask(std::uint16_t type, const void *payload = nullptr, std::size_t len = 0);
	nlohmann::json status() { return ask(GOS_REQ_STATUS); }
	nlohmann::json tenant(std::uint64_t job, unsigned gpu = 0);	// from status
	// The job's record in state_dir, written every persist period; null
	// while it is not written yet, or caught mid-rename.
	nlohmann::json saved_record(std::uint64_t job) const;
	int request(std::uint16_t type, const void *payload, std::size_t len, std::string *error = nullptr);

	void register_step(std::uint64_t job, std::vector<std::uint32_t> gpus = {0}, std::uint32_t uid = 0,
			   std::uint32_t factor_milli = 0, const std::string &qos = "");
	void register_task(std::uint64_t job, pid_t pid);
	void end_step(std::uint64_t job);

	std::string socket, dir, policy, report_dir, state_dir;
	std::vector<std::string> environment;	// NAME=value, added to the daemon's

private:
	std::string gpu_yaml_;
	pid_t pid_ = -1;
};

// Runs check() in a forked child as user nobody (65534): true if it held.
// The child never returns into the test framework.
bool as_nobody(const std::function<bool()> &check);

// Waits until pred() holds, polling; false on timeout.
bool eventually(const std::function<bool()> &pred, std::chrono::milliseconds limit = std::chrono::seconds(5));

struct Allocation {
	std::uint64_t size;
	std::uint32_t priority = 8;
};

// What an agent does with orders.
enum class Orders { ack, ignore, fail };

struct AgentScript {
	std::string socket;
	std::uint64_t claim_job = 0;	// job id sent in HELLO; 0 = none claimed
	int rank = 0;
	std::vector<Allocation> allocs;
	Orders orders = Orders::ack;
	bool reconnect = false;		// re-register after losing the daemon
};

// A forked agent. The child waits for go(), then runs the script, printing
// lines to a pipe the test reads: "hello <status>", "alloc <buffer>
// <device> <host> <waiting>", "order <kind> <buffer> <offset> <length>
// <host>", "reregistered", "lost". It serves orders until stop() or kill9().
class AgentProcess {
public:
	explicit AgentProcess(AgentScript script);
	~AgentProcess();
	AgentProcess(const AgentProcess &) = delete;
	AgentProcess &operator=(const AgentProcess &) = delete;

	pid_t pid() const { return pid_; }
	void go();
	// The next line the child printed, or "" on timeout.
	std::string line(std::chrono::milliseconds limit = std::chrono::seconds(5));
	// Lines until one starts with prefix (returned), or "" on timeout.
	std::string wait_for(const std::string &prefix, std::chrono::milliseconds limit = std::chrono::seconds(5));
	void stop();
	void kill9();

private:
	pid_t pid_ = -1;
	int go_fd_ = -1, out_fd_ = -1;
	std::string buffered_;
};

} // namespace gos_test
