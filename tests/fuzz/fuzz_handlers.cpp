// libFuzzer target: any bytes as a stream from a forged caller, handled by
// the daemon itself (its userspace engine, one simulated GPU). The first
// bytes forge the caller's credentials (root or another uid, any pid); the
// rest is decoded as the daemon decodes requests and every frame goes to the
// daemon's handlers, so the task registration's pid and range checks and
// hello's identity checks see any pid, job, step and uid. Job 1 step 0 is
// registered once by root, so a task registration reaches the pid checks.
// The fuzzer's own process is also job 1's task and says hello once: an
// input whose first byte has bit 1 set is sent by that agent, so the agent
// handlers meet the caps (ranks, agents, buffers, one allocation's size),
// which the policy sets small so that inputs reach them.
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "common/config/config.hpp"
#include "common/proto/wire.hpp"
#include "common/util/log.hpp"
#include "daemon/gpud/daemon.hpp"

namespace {

gos::gpud::SessionId agent;	// the fuzzer's own process, job 1's agent

template <class T>
gos::proto::Frame frame(std::uint16_t type, const T &req)
{
	gos::proto::Frame f;
	f.hdr.type = type;
	f.hdr.seq = 1;
	f.payload.assign(reinterpret_cast<const std::uint8_t *>(&req), reinterpret_cast<const std::uint8_t *>(&req) + sizeof req);
	return f;
}

gos::gpud::Daemon &daemon()
{
	static gos::gpud::Daemon *d = [] {
		gos::log::threshold() = gos::log::error;	// one line per refused request otherwise
		static char dir[] = "/tmp/gos-fuzz-handlers-XXXXXX";
		if (!::mkdtemp(dir))
			::abort();
		std::atexit([] { std::filesystem::remove_all(dir); });
		std::string base = dir;
		gos::config::Config cfg = gos::config::parse_config(
			"engine: userspace\nsocket: " + base + "/s.sock\nstate_dir: " + base + "/state\nreports: {dir: " + base +
				"/reports}\nreserve: 0\nballoon: {enabled: false}\nsimulated_gpus:\n  - {memory: 256M}\n"
				"chunk_size: 64K\nmax_ranks_per_job: 4\nmax_agents_per_job: 2\nmax_buffers_per_job: 16\n",
			"fuzz.yaml");
		gos::gpud::Discovery gpus = gos::gpud::discover_gpus(cfg);
		auto engine = gos::gpud::make_engine(cfg);
		auto *made = new gos::gpud::Daemon(cfg, std::move(gpus), std::move(engine));
		gos_req_step step{};
		step.job_id = 1;
		step.ngpus = 1;
		auto root = made->open({::getpid(), 0, 0}, [](gos::proto::Bytes) {});
		made->handle(root, frame(GOS_REQ_STEP_REGISTER, step));
		gos_req_task task{1, 0, static_cast<std::uint32_t>(::getpid())};
		made->handle(root, frame(GOS_REQ_TASK_REGISTER, task));
		made->close(root);
		agent = made->open({::getpid(), 0, 0}, [](gos::proto::Bytes) {});
		gos_req_hello hello{static_cast<std::uint32_t>(::getpid()), 0, 0, 1, 1};
		made->handle(agent, frame(GOS_REQ_HELLO, hello));
		return made;
	}();
	return *d;
}

std::uint32_t word(const std::uint8_t *p)
{
	std::uint32_t w;
	std::memcpy(&w, p, sizeof w);
	return w;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	if (size < 9)
		return 0;
	gos::gpud::Daemon &d = daemon();
	// Root half the time: most requests that reach job state are root's.
	gos::gpud::Peer caller{static_cast<pid_t>(word(data + 1)), data[0] & 1 ? 0 : word(data + 5), 0};
	bool as_agent = data[0] & 2;
	auto id = as_agent ? agent : d.open(caller, [](gos::proto::Bytes) {});
	gos::proto::Decoder dec(gos::proto::Decoder::Accepts::requests);
	dec.feed(data + 9, size - 9);
	while (auto f = dec.next())
		d.handle(id, *f);
	if (!as_agent)
		d.close(id);
	return 0;
}
