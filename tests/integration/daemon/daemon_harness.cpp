#include "daemon_harness.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <boost/test/framework.hpp>
#include <boost/test/results_collector.hpp>

#include "common/proto/client.hpp"

namespace gos_test {

namespace {

std::string daemon_binary()
{
	const char *build = std::getenv("BUILD");
	return std::string(build && *build ? build : "build") + "/sbin/gpuoversubd";
}

// True while the running test case has a failed check, or is unwinding
// from an exception the framework will report.
bool case_failing()
{
	if (std::uncaught_exceptions() > 0)
		return true;
	namespace utf = boost::unit_test;
	return !utf::results_collector.results(utf::framework::current_test_case_id()).passed();
}

} // namespace

bool as_nobody(const std::function<bool()> &check)
{
	pid_t child = ::fork();
	if (child == 0) {
		try {
			::_exit(::setuid(65534) == 0 && check() ? 0 : 11);
		} catch (...) {
			::_exit(12);
		}
	}
	int st = 0;
	::waitpid(child, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

bool eventually(const std::function<bool()> &pred, std::chrono::milliseconds limit)
{
	auto end = std::chrono::steady_clock::now() + limit;
	while (std::chrono::steady_clock::now() < end) {
		if (pred())
			return true;
		std::this_thread::sleep_for(std::chrono::milliseconds(20));
	}
	return pred();
}

DaemonUnderTest::DaemonUnderTest(const std::string &extra_yaml, bool start_now)
{
	char tmpl[] = "/tmp/gos-daemon-XXXXXX";
	if (!::mkdtemp(tmpl))
		throw std::runtime_error("mkdtemp failed");
	dir = tmpl;
	::chmod(dir.c_str(), 0755);	// other users' processes reach the socket
	socket = dir + "/run/gpuoversubd.sock";
	policy = dir + "/gpuoversub.yaml";
	report_dir = dir + "/reports";
	state_dir = dir + "/state";
	write_policy(extra_yaml);
	if (start_now)
		start();
}

void DaemonUnderTest::write_policy(const std::string &extra_yaml)
{
	std::ofstream p(policy);
	p << "socket: " << socket << "\nstate_dir: " << state_dir << "\nreports: {dir: " << report_dir << "}\n"
	  << "reserve: 0\nchunk_size: 2M\n";	// the tests' sizes are counted in 2M chunks
	if (extra_yaml.find("simulated_gpus") == std::string::npos)
		p << "simulated_gpus:\n  - {memory: 1G, numa_node: 0, pci_bus_id: '0000:17:00.0'}\n";
	p << extra_yaml;
}

DaemonUnderTest::~DaemonUnderTest()
{
	if (pid_ > 0)
		stop(SIGKILL);
	if (case_failing())	// a failing test shows why
		std::fprintf(stderr, "gpuoversubd's log (%s):\n%s", dir.c_str(), log().c_str());
	if (std::system(("rm -rf " + dir).c_str()) != 0)
		std::fprintf(stderr, "could not remove %s\n", dir.c_str());
}

void DaemonUnderTest::spawn()
{
	pid_ = ::fork();
	if (pid_ == 0) {
		::prctl(PR_SET_PDEATHSIG, SIGKILL);	// a crashed test leaves no daemon behind
		int log = ::open((dir + "/daemon.log").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
		::dup2(log, 2);
		for (auto &e : environment)
			::putenv(e.data());
		::execl(daemon_binary().c_str(), "gpuoversubd", "-c", policy.c_str(), nullptr);
		std::perror("exec gpuoversubd");
		::_exit(127);
	}
}

void DaemonUnderTest::start()
{
	spawn();
	bool up = eventually([&] {
		int st;
		if (::waitpid(pid_, &st, WNOHANG) == pid_) {
			pid_ = -1;
			return true;	// exited: reported below
		}
		try {
			gos::proto::Client c(socket);
			return true;
		} catch (const std::exception &) {
			return false;
		}
	});
	if (!up || pid_ < 0) {
		pid_ = -1;
		throw std::runtime_error("gpuoversubd did not start:\n" + log());
	}
}

int DaemonUnderTest::stop(int sig)
{
	if (pid_ <= 0)
		return -1;
	::kill(pid_, sig);
	int st = 0;
	::waitpid(pid_, &st, 0);
	pid_ = -1;
	// A program the daemon was starting (the Slurm facts reader) holds a
	// copy of its listening sockets from its fork until its exec closes
	// them, and that can outlive a daemon killed in between: a client
	// connecting then lands in a queue that is never served, and is reset
	// when the copy closes (seen under load, 1 start in 10 after kill -9).
	// The next start waits until the copy is gone.
	auto nobody_listens = [](const std::string &path) {
		try {
			gos::proto::Client c(path);
			return false;
		} catch (const std::exception &) {
			return true;
		}
	};
	if (!eventually([&] { return nobody_listens(socket) && nobody_listens(gos::proto::root_socket_of(socket)); }))
		std::fprintf(stderr, "someone still listens on %s 5 s after gpuoversubd ended\n", socket.c_str());
	return st;
}

void DaemonUnderTest::signal(int sig)
{
	if (pid_ > 0)
		::kill(pid_, sig);
}

std::string DaemonUnderTest::log() const
{
	std::stringstream ss;
	ss << std::ifstream(dir + "/daemon.log").rdbuf();
	return ss.str();
}

int DaemonUnderTest::request(std::uint16_t type, const void *payload, std::size_t len, std::string *error)
{
	gos::proto::Client c(socket);
	auto rep = c.call(type, payload, len, 5000);
	if (error)
		*error = rep.error;
	return rep.status;
}

nlohmann::json DaemonUnderTest::ask(std::uint16_t type, const void *payload, std::size_t len)
{
	gos::proto::Client c(socket);
	auto rep = c.call(type, payload, len, 5000);
	if (rep.status)
		throw std::runtime_error("request " + std::to_string(type) + " failed: " + rep.error);
	return nlohmann::json::parse(rep.body.begin(), rep.body.end());
}

nlohmann::json DaemonUnderTest::tenant(std::uint64_t job, unsigned gpu)
{
	nlohmann::json st = status();	// kept alive: the loop reads into it
	for (const auto &t : st["gpus"][gpu]["tenants"])
		if (t["job"] == job)
			return t;
	return nullptr;
}

nlohmann::json DaemonUnderTest::saved_record(std::uint64_t job) const
{
	std::ifstream in(state_dir + "/job-" + std::to_string(job) + ".json");
	nlohmann::json record = nlohmann::json::parse(in, nullptr, false);
	return record.is_discarded() ? nlohmann::json(nullptr) : record;
}

void DaemonUnderTest::register_step(std::uint64_t job, std::vector<std::uint32_t> gpus, std::uint32_t uid,
				    std::uint32_t factor_milli, const std::string &qos)
{
	gos_req_step s{};
	s.job_id = job;
	s.uid = uid;
	s.ngpus = static_cast<std::uint32_t>(gpus.size());
	for (std::size_t i = 0; i < gpus.size(); i++)
		s.gpus[i] = gpus[i];
	s.factor_milli = factor_milli;
	std::strncpy(s.qos, qos.c_str(), sizeof s.qos - 1);
	std::string why;
	if (request(GOS_REQ_STEP_REGISTER, &s, sizeof s, &why))
		throw std::runtime_error("step register: " + why);
}

void DaemonUnderTest::register_task(std::uint64_t job, pid_t pid)
{
	gos_req_task t{job, 0, static_cast<std::uint32_t>(pid)};
	std::string why;
	if (request(GOS_REQ_TASK_REGISTER, &t, sizeof t, &why))
		throw std::runtime_error("task register: " + why);
}

void DaemonUnderTest::end_step(std::uint64_t job)
{
	gos_req_step_ref r{job, 0, 0};
	std::string why;
	if (request(GOS_REQ_STEP_END, &r, sizeof r, &why))
		throw std::runtime_error("step end: " + why);
}

namespace {

void say(int fd, const std::string &text)
{
	std::string l = text + "\n";
	if (::write(fd, l.data(), l.size()) < 0)
		::_exit(3);
}

// Connects, says hello and makes the script's allocations; returns the
// buffers, or throws.
std::vector<std::uint64_t> register_agent(gos::proto::Client &c, const AgentScript &s, int out)
{
	gos_req_hello h{static_cast<std::uint32_t>(::getpid()), s.rank, s.rank, 1, s.claim_job};
	auto rep = c.call(GOS_REQ_HELLO, h);
	say(out, "hello " + std::to_string(rep.status) + " " + rep.error);
	if (rep.status)
		throw std::runtime_error("hello refused");
	std::vector<std::uint64_t> buffers;
	for (const auto &a : s.allocs) {
		gos_req_alloc req{0, a.priority, 0, 0, a.size};
		auto r = c.call(GOS_REQ_ALLOC, req);
		if (r.status) {
			say(out, "alloc-failed " + std::to_string(r.status) + " " + r.error);
			continue;
		}
		gos_rep_alloc ra;
		std::memcpy(&ra, r.body.data(), sizeof ra);
		buffers.push_back(ra.buffer);
		say(out, "alloc " + std::to_string(ra.buffer) + " " + std::to_string(ra.device_bytes) + " " +
				 std::to_string(ra.host_bytes) + " " + std::to_string(ra.waiting_bytes));
	}
	return buffers;
}

// Serves orders until the test closes the control pipe.
void serve(gos::proto::Client &c, const AgentScript &s, int out, int control)
{
	for (;;) {
		pollfd p{control, POLLIN, 0};
		if (::poll(&p, 1, 0) > 0)
			return;		// closed: stop
		auto o = c.next_order(50);
		if (!o)
			continue;
		say(out, "order " + std::to_string(o->kind) + " " + std::to_string(o->buffer) + " " +
				 std::to_string(o->offset) + " " + std::to_string(o->length) + " " + std::to_string(o->host_bytes));
		if (!o->id || s.orders == Orders::ignore)
			continue;
		gos_req_order_done d{o->id, s.orders == Orders::ack ? 1u : 0u, 0, 1000};
		c.call(GOS_REQ_ORDER_DONE, d);
	}
}

[[noreturn]] void agent_main(const AgentScript &s, int out, int control) noexcept
{
	char go;
	if (::read(control, &go, 1) != 1)
		::_exit(0);
	for (bool first = true;; first = false) {
		try {
			gos::proto::Client c(s.socket);
			register_agent(c, s, out);
			if (!first)
				say(out, "reregistered");
			serve(c, s, out, control);
			::_exit(0);
		} catch (const std::exception &e) {
			say(out, std::string("lost ") + e.what());
			if (!s.reconnect)
				::_exit(1);
		}
		// The daemon restarts: try again for a while.
		bool back = eventually([&] {
			try {
				gos::proto::Client probe(s.socket);
				return true;
			} catch (const std::exception &) {
				return false;
			}
		}, std::chrono::seconds(10));
		if (!back)
			::_exit(2);
	}
}

} // namespace

AgentProcess::AgentProcess(AgentScript script)
{
	int go[2], out[2];
	if (::pipe(go) || ::pipe(out))
		throw std::runtime_error("pipe");
	pid_ = ::fork();
	if (pid_ == 0) {
		::prctl(PR_SET_PDEATHSIG, SIGKILL);
		::close(go[1]);
		::close(out[0]);
		agent_main(script, out[1], go[0]);
	}
	::close(go[0]);
	::close(out[1]);
	go_fd_ = go[1];
	out_fd_ = out[0];
}

AgentProcess::~AgentProcess()
{
	if (pid_ > 0)
		kill9();
	if (out_fd_ >= 0)
		::close(out_fd_);
}

void AgentProcess::go()
{
	if (::write(go_fd_, "g", 1) != 1)
		throw std::runtime_error("agent gone");
}

std::string AgentProcess::line(std::chrono::milliseconds limit)
{
	auto end = std::chrono::steady_clock::now() + limit;
	for (;;) {
		auto nl = buffered_.find('\n');
		if (nl != std::string::npos) {
			std::string l = buffered_.substr(0, nl);
			buffered_.erase(0, nl + 1);
			return l;
		}
		auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
		pollfd p{out_fd_, POLLIN, 0};
		if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0)
			return "";
		char buf[4096];
		ssize_t n = ::read(out_fd_, buf, sizeof buf);
		if (n <= 0)
			return "";
		buffered_.append(buf, static_cast<std::size_t>(n));
	}
}

std::string AgentProcess::wait_for(const std::string &prefix, std::chrono::milliseconds limit)
{
	auto end = std::chrono::steady_clock::now() + limit;
	for (;;) {
		auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
		if (left.count() <= 0)
			return "";
		std::string l = line(left);
		if (l.empty() || l.rfind(prefix, 0) == 0)
			return l;
	}
}

void AgentProcess::stop()
{
	if (go_fd_ >= 0) {
		::close(go_fd_);
		go_fd_ = -1;
	}
	if (pid_ > 0) {
		::waitpid(pid_, nullptr, 0);
		pid_ = -1;
	}
}

void AgentProcess::kill9()
{
	if (pid_ > 0) {
		::kill(pid_, SIGKILL);
		::waitpid(pid_, nullptr, 0);
		pid_ = -1;
	}
	if (go_fd_ >= 0) {
		::close(go_fd_);
		go_fd_ = -1;
	}
}

} // namespace gos_test
