// Agent-to-daemon allocation round trip against a plain Unix-socket echo of
// the same bytes, measured in the same run. Starts a real gpuoversubd with a
// simulated GPU; needs root (it registers itself as a job's task).
// Usage: bench_roundtrip [--results FILE] [--daemon PATH]
//        bench_roundtrip --echo: the median echo alone, in ns (bench_agent.sh's baseline)
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/util/atomic_file.hpp"
#include "common/proto/client.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

void send_all(int fd, const void *p, std::size_t n)
{
	for (std::size_t off = 0; off < n;) {
		ssize_t k = ::write(fd, static_cast<const char *>(p) + off, n - off);
		if (k <= 0)
			throw std::runtime_error("echo write");
		off += static_cast<std::size_t>(k);
	}
}

void recv_all(int fd, void *p, std::size_t n)
{
	for (std::size_t off = 0; off < n;) {
		ssize_t k = ::read(fd, static_cast<char *>(p) + off, n - off);
		if (k <= 0)
			throw std::runtime_error("echo read");
		off += static_cast<std::size_t>(k);
	}
}

// The floor any daemon round trip pays: a request over a Unix socket to
// another process, as the daemon is, and a reply of the daemon's reply
// size. (An echo thread of this process was the baseline before: the
// scheduler wakes it on this CPU, while the daemon wakes on the other, and
// on this 2-CPU VM the cross-CPU wakeup alone made the round trip 4-5x the
// thread's echo; pinned to one CPU it was 0.9x.) Timed one round at a
// time, interleaved with the daemon's, so that both see the same load.
class Echo {
public:
	Echo()
	{
		if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sv_) != 0)
			throw std::runtime_error("socketpair");
		server_ = ::fork();
		if (server_ < 0)
			throw std::runtime_error("fork");
		if (server_ == 0) {
			::close(sv_[0]);
			std::vector<char> in(req), out(rep);
			try {
				for (;;) {
					recv_all(sv_[1], in.data(), req);
					send_all(sv_[1], out.data(), rep);
				}
			} catch (const std::exception &) {
				::_exit(0);	// the client closed its end
			}
		}
		::close(sv_[1]);
	}
	~Echo()
	{
		::close(sv_[0]);
		::waitpid(server_, nullptr, 0);
	}
	double once_us()
	{
		std::vector<char> in(rep), out(req);
		auto start = clock_type::now();
		send_all(sv_[0], out.data(), req);
		recv_all(sv_[0], in.data(), rep);
		return std::chrono::duration<double, std::micro>(clock_type::now() - start).count();
	}

private:
	static constexpr std::size_t req = sizeof(gos_wire_hdr) + sizeof(gos_req_alloc);
	static constexpr std::size_t rep = sizeof(gos_wire_hdr) + sizeof(gos_reply) + sizeof(gos_rep_alloc);
	int sv_[2];
	pid_t server_;
};

std::string tmpdir()
{
	char dir[] = "/tmp/gos-bench-XXXXXX";
	if (!::mkdtemp(dir))
		throw std::runtime_error("mkdtemp");
	return dir;
}

void replace_section(const std::string &path, const std::string &section)
{
	const std::string begin = "<!-- bench_roundtrip:begin -->", end = "<!-- bench_roundtrip:end -->";
	std::stringstream ss;
	ss << std::ifstream(path).rdbuf();
	std::string text = ss.str();
	std::string block = begin + "\n" + section + end;
	auto b = text.find(begin), e = text.find(end);
	if (b != std::string::npos && e != std::string::npos && e > b)
		text.replace(b, e + end.size() - b, block);
	else
		text += (text.empty() ? "# Benchmark results\n\n" : "\n") + block + "\n";
	gos::write_file_atomically(path, text);
}

} // namespace

int main(int argc, char **argv)
{
	std::string results, daemon = "build/sbin/gpuoversubd";
	if (argc == 2 && !std::strcmp(argv[1], "--echo")) {
		Echo echoer;
		std::vector<double> t;
		for (int i = 0; i < 20000; i++)
			t.push_back(echoer.once_us());
		std::printf("%.0f\n", median(t) * 1000);
		return 0;
	}
	for (int i = 1; i < argc; i++) {
		if (!std::strcmp(argv[i], "--results") && i + 1 < argc)
			results = argv[++i];
		else if (!std::strcmp(argv[i], "--daemon") && i + 1 < argc)
			daemon = argv[++i];
		else {
			std::fprintf(stderr, "usage: bench_roundtrip [--results FILE] [--daemon PATH] | --echo\n");
			return 2;
		}
	}
	if (::geteuid() != 0) {
		std::fprintf(stderr, "bench_roundtrip: needs root to register a job with the daemon; skipped\n");
		return 0;
	}
	std::string dir = tmpdir(), sock = dir + "/gpud.sock";
	{
		std::ofstream cfg(dir + "/gpuoversub.yaml");
		cfg << "socket: " << sock << "\nstate_dir: " << dir << "/state\nreports: {dir: " << dir
		    << "/reports}\nchunk_size: 2M\nballoon: {enabled: false}\nsimulated_gpus:\n  - memory: 1T\n";
	}
	pid_t child = ::fork();
	if (child == 0) {
		int log = ::open((dir + "/daemon.log").c_str(), O_WRONLY | O_CREAT, 0644);
		::dup2(log, 2);
		::execl(daemon.c_str(), daemon.c_str(), "-c", (dir + "/gpuoversub.yaml").c_str(), nullptr);
		std::perror("exec gpuoversubd");
		::_exit(127);
	}
	int rc = 0;
	try {
		for (int i = 0; i < 200 && ::access(sock.c_str(), F_OK) != 0; i++)
			std::this_thread::sleep_for(std::chrono::milliseconds(20));
		gos::proto::Client root(sock);
		gos_req_step step{};
		step.job_id = 1;
		step.ngpus = 1;
		if (root.step_register(step).status)
			throw std::runtime_error("step register failed");
		gos_req_task task{1, 0, static_cast<std::uint32_t>(::getpid())};
		if (root.task_register(task).status)
			throw std::runtime_error("task register failed");
		gos::proto::Client agent(sock);
		gos_req_hello hello{static_cast<std::uint32_t>(::getpid()), 0, 0, 1, 1};
		if (agent.hello(hello).status)
			throw std::runtime_error("hello failed");
		const int reps = 20000;
		std::vector<double> t, echo;
		Echo echoer;
		for (int i = 0; i < reps; i++) {
			echo.push_back(echoer.once_us());
			gos_req_alloc req{0, 8, 0, 0, 2 << 20};
			auto start = clock_type::now();
			auto rep = agent.alloc(req);
			t.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - start).count());
			agent.free_buffer(gos_req_buffer{rep.value.buffer});
		}
		// The paired ratio: each round trip against the echo just before it,
		// which saw the same load.
		std::vector<double> ratios;
		for (std::size_t i = 0; i < t.size(); i++)
			ratios.push_back(t[i] / echo[i]);
		double ours = median(t), base = median(echo), ratio = median(ratios);
		char row[512];
		std::ostringstream s;
		char day[32];
		std::time_t now = std::time(nullptr);
		std::strftime(day, sizeof day, "%Y-%m-%d", std::gmtime(&now));
		s << "## Agent-to-daemon round trip, " << day << "\n\n"
		  << "Machine: " << std::thread::hardware_concurrency() << " CPUs (the engine section names the model). "
		  << "Real gpuoversubd (userspace engine, simulated GPU), 2 MiB allocations, " << reps
		  << " round trips, each after one echo round trip, so that both see the same load; medians, the ratio "
		  << "the median of the paired ratios.\n\n"
		  << "| Measure | Figure | Baseline in the same run | Ratio | Target |\n|---|---|---|---|---|\n";
		std::snprintf(row, sizeof row, "| Alloc round trip | %.1f us | %.1f us Unix-socket echo of the same bytes | %.2fx | <= 1.2x: %s |\n\n",
			      ours, base, ratio, ratio <= 1.2 ? "meets target" : "MISSES target");
		s << row;
		std::fputs(s.str().c_str(), stdout);
		if (!results.empty())
			replace_section(results, s.str());
	} catch (const std::exception &e) {
		std::fprintf(stderr, "bench_roundtrip: %s\n", e.what());
		rc = 1;
	}
	::kill(child, SIGTERM);
	::waitpid(child, nullptr, 0);
	std::string rm = "rm -rf " + dir;
	if (std::system(rm.c_str()) != 0)
		std::fprintf(stderr, "bench_roundtrip: could not remove %s\n", dir.c_str());
	return rc;
}
