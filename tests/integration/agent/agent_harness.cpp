#include "agent_harness.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "tests/integration/daemon/daemon_harness.hpp"

namespace gos_test {
namespace {

std::string build_dir()
{
	const char *b = std::getenv("BUILD");
	return b && *b ? b : "build";
}

std::string absolute(const std::string &p)
{
	char *r = realpath(p.c_str(), nullptr);
	std::string out = r ? r : p;
	std::free(r);
	return out;
}

} // namespace

std::string build_path(const std::string &relative) { return absolute(build_dir()) + "/" + relative; }

FakeGpu::FakeGpu(std::uint64_t cap, std::string dir)
	: capacity(cap), state(dir + "/fakecuda.state"), calls(dir + "/fakecuda.log")
{
}

AppProcess::AppProcess(DaemonUnderTest *daemon, std::uint64_t job, const FakeGpu &gpu, const std::string &via,
		       std::vector<std::pair<std::string, std::string>> env)
{
	static int serial;
	err_path_ = (daemon ? daemon->dir : std::string("/tmp")) + "/app-" + std::to_string(++serial) + ".err";
	int in[2], out[2], go[2];
	if (pipe(in) || pipe(out) || pipe(go))
		throw std::runtime_error("pipe");
	const std::string agent = build_path("lib/libgpuoversub.so"), driver = build_path("tests/fakecuda"),
			  prog = build_path("tests/tools/gos_testapp");
	pid_ = fork();
	if (pid_ == 0) {
		try {
			prctl(PR_SET_PDEATHSIG, SIGKILL);	// a crashed test leaves no process behind
			char c;
			close(go[1]);
			if (read(go[0], &c, 1) != 1)
				_exit(120);
			dup2(in[0], 0);
			dup2(out[1], 1);
			int err = open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
			dup2(err, 2);
			setenv("LD_PRELOAD", agent.c_str(), 1);
			setenv("LD_LIBRARY_PATH", driver.c_str(), 1);
			setenv("FAKECUDA_MEMORY", std::to_string(gpu.capacity).c_str(), 1);
			setenv("FAKECUDA_STATE", gpu.state.c_str(), 1);
			setenv("FAKECUDA_LOG", gpu.calls.c_str(), 1);
			setenv("GPUOVERSUB_SOCKET", daemon ? daemon->socket.c_str() : "/nonexistent/gpuoversub.sock", 1);
			setenv("GPUOVERSUB_CONTEXT_BYTES", "0", 0);
			setenv("ASAN_OPTIONS", "verify_asan_link_order=0", 1);	// the agent is preloaded first
			unsetenv("SLURM_JOB_ID");
			for (auto &[k, v] : gpu.env)
				setenv(k.c_str(), v.c_str(), 1);
			for (auto &[k, v] : env)
				setenv(k.c_str(), v.c_str(), 1);
			execl(prog.c_str(), prog.c_str(), "--via", via.c_str(), static_cast<char *>(nullptr));
		} catch (...) {
		}
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	close(go[0]);
	in_fd_ = in[1];
	out_fd_ = out[0];
	if (daemon && job)
		daemon->register_task(job, pid_);
	if (write(go[1], "g", 1) != 1)
		throw std::runtime_error("cannot start the test program");
	close(go[1]);
	std::string ready = cmd("");
	if (ready != "ready")
		throw std::runtime_error("the test program did not start: '" + ready + "' " + errors());
}

AppProcess::~AppProcess()
{
	if (pid_ > 0) {
		kill(pid_, SIGKILL);
		waitpid(pid_, nullptr, 0);
	}
	close(in_fd_);
	close(out_fd_);
}

std::string AppProcess::cmd(const std::string &line, std::chrono::milliseconds limit)
{
	if (!line.empty()) {
		std::string l = line + "\n";
		if (write(in_fd_, l.data(), l.size()) != static_cast<ssize_t>(l.size()))
			return "";
	}
	auto deadline = std::chrono::steady_clock::now() + limit;
	for (;;) {
		auto nl = buffered_.find('\n');
		if (nl != std::string::npos) {
			std::string reply = buffered_.substr(0, nl);
			buffered_.erase(0, nl + 1);
			return reply;
		}
		auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
		pollfd p{out_fd_, POLLIN, 0};
		if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0)
			return "";
		char buf[4096];
		ssize_t n = read(out_fd_, buf, sizeof buf);
		if (n <= 0)
			return "";
		buffered_.append(buf, static_cast<std::size_t>(n));
	}
}

std::pair<std::uint64_t, std::uint64_t> AppProcess::where(const std::string &name)
{
	std::istringstream in(cmd("where " + name));
	std::string ok;
	std::uint64_t d = 0, h = 0;
	in >> ok >> d >> h;
	return {d, h};
}

void AppProcess::signal(int sig)
{
	if (pid_ > 0)
		kill(pid_, sig);
}

int AppProcess::wait(std::chrono::milliseconds limit)
{
	int status = -1;
	if (pid_ > 0 && eventually([&] { return waitpid(pid_, &status, WNOHANG) == pid_; }, limit))
		pid_ = -1;
	return status;
}

std::string AppProcess::errors() const
{
	std::ifstream in(err_path_);
	std::stringstream s;
	s << in.rdbuf();
	return s.str();
}

} // namespace gos_test
