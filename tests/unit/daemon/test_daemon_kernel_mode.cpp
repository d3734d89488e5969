// The daemon with its engine in the kernel, in process: an engine that
// outlives the daemon object (as gpuoversub.ko outlives gpuoversubd) and
// keeps the bindings it is told, in place of /dev/gpuoversub. The module
// itself is tested in QEMU (tests/integration/kmod); this is the daemon's side.
#define BOOST_TEST_MODULE daemon_kernel_mode
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>

#include "common/report/report.hpp"
#include "daemon/gpud/daemon.hpp"
#include "common/proto/wire.hpp"

namespace gpud = gos::gpud;
namespace proto = gos::proto;
namespace cfgns = gos::config;

namespace {

constexpr std::uint64_t MiB = 1ULL << 20;

// What survives a daemon restart: the module's engine, its load, bindings.
struct Module {
	gpud::EngineBackend engine;	// its control, and the agents' files as clients
	std::uint64_t instance;
	std::map<std::pair<pid_t, std::uint64_t>, std::vector<std::uint32_t>> bindings;
	int tenants_created = 0;

	explicit Module(std::uint64_t load) : instance(load)
	{
		gos_config c;
		gos_config_defaults(&c);
		engine = gpud::userspace_engine(c);
	}
};

class FakeKernel final : public gpud::EngineControl {
public:
	explicit FakeKernel(Module &m) : m_(m) {}
	std::string name() const override { return "kernel"; }
	std::uint64_t chunk_size() const override { return 2 * MiB; }
	std::uint64_t instance() const override { return m_.instance; }
	int gpu_add(std::uint32_t g, std::uint64_t p, std::uint64_t r) override
	{
		int err = m_.engine.control->gpu_add(g, p, r);
		return err == -EEXIST ? 0 : err;
	}
	int gpu_set_external(std::uint32_t g, std::uint64_t b) override { return m_.engine.control->gpu_set_external(g, b); }
	int gpu_stats(std::uint32_t g, gos_gpu_stats &o) override { return m_.engine.control->gpu_stats(g, o); }
	int tenant_create(std::uint32_t g, std::uint32_t w, std::uint64_t l, std::uint32_t &id) override
	{
		m_.tenants_created++;
		return m_.engine.control->tenant_create(g, w, l, id);
	}
	int tenant_policy(std::uint32_t t, std::uint32_t w, std::uint64_t l, std::uint64_t min) override
	{
		return m_.engine.control->tenant_policy(t, w, l, min);
	}
	int tenant_max_buffers(std::uint32_t t, std::uint32_t most) override
	{
		return m_.engine.control->tenant_max_buffers(t, most);
	}
	int tenant_unmanaged(std::uint32_t t, std::uint64_t b) override { return m_.engine.control->tenant_unmanaged(t, b); }
	int tenant_destroy(std::uint32_t t) override { return m_.engine.control->tenant_destroy(t); }
	int tenant_stats(std::uint32_t t, gos_tenant_stats &o) override { return m_.engine.control->tenant_stats(t, o); }
	int tenant_list(std::vector<std::uint32_t> &out) override { return m_.engine.control->tenant_list(out); }
	int bind(pid_t pid, std::uint64_t cg, const std::vector<std::uint32_t> &tenants) override
	{
		m_.bindings[{pid, cg}] = tenants;
		return 0;
	}
	int unbind(pid_t pid, std::uint64_t cg) override { return m_.bindings.erase({pid, cg}) ? 0 : -ENOENT; }

private:
	Module &m_;
};

struct Node {
	std::filesystem::path dir;
	cfgns::Config cfg;

	Node()
	{
		char tmpl[] = "/tmp/gos-kmode-XXXXXX";
		BOOST_REQUIRE(::mkdtemp(tmpl));
		dir = tmpl;
		cfg.start.state_dir = (dir / "state").string();
		cfg.policy.report_dir = (dir / "reports").string();
		cfg.start.reserve = 0;
		cfg.start.chunk_size = 2 * MiB;	// the module's
		cfg.policy.balloon = false;
	}
	~Node() { std::filesystem::remove_all(dir); }

	std::unique_ptr<gpud::Daemon> start(Module &m)
	{
		gpud::Discovery d;
		for (std::uint32_t i = 0; i < 2; i++)
			d.gpus.push_back({i, 256 * MiB, "0000:0" + std::to_string(i) + ":00.0", -1, true});
		d.source = "simulated";
		return std::make_unique<gpud::Daemon>(cfg, std::move(d), gpud::EngineBackend{std::make_unique<FakeKernel>(m), nullptr});
	}
};

// One connection to the daemon object: requests in, the reply out.
struct Conn {
	gpud::SessionId id;
	proto::Bytes out;

	Conn(gpud::Daemon &d, uid_t uid) : daemon(d)
	{
		id = d.open({::getpid(), uid, 0}, [this](proto::Bytes b) { out.insert(out.end(), b.begin(), b.end()); });
	}
	~Conn() { daemon.close(id); }

	template <class T>
	proto::Reply ask(std::uint16_t type, const T &payload)
	{
		proto::Frame f;
		f.hdr.type = type;
		f.hdr.seq = 1;
		f.payload.assign(reinterpret_cast<const std::uint8_t *>(&payload),
				 reinterpret_cast<const std::uint8_t *>(&payload) + sizeof payload);
		out.clear();
		daemon.handle(id, f);
		proto::Decoder dec;
		dec.feed(out.data(), out.size());
		auto frame = dec.next();
		BOOST_REQUIRE(frame);
		auto rep = proto::decode_reply(*frame);
		BOOST_REQUIRE(rep);
		return *rep;
	}

	gpud::Daemon &daemon;
};

void register_step(Conn &root, std::uint64_t job, std::uint32_t step, std::vector<std::uint32_t> gpus)
{
	gos_req_step st{};
	st.job_id = job;
	st.step_id = step;
	st.uid = 1000;
	st.ngpus = static_cast<std::uint32_t>(gpus.size());
	std::copy(gpus.begin(), gpus.end(), st.gpus);
	BOOST_REQUIRE_EQUAL(root.ask(GOS_REQ_STEP_REGISTER, st).status, 0);
}

void register_task(Conn &root, std::uint64_t job, std::uint32_t step, pid_t pid)
{
	gos_req_task t{job, step, static_cast<std::uint32_t>(pid)};
	BOOST_REQUIRE_EQUAL(root.ask(GOS_REQ_TASK_REGISTER, t).status, 0);
}

// What an agent's file does in the module: a client allocating in a tenant.
std::uint32_t agent_alloc(Module &m, std::uint32_t tenant, std::uint64_t bytes, std::uint64_t &buffer)
{
	std::uint32_t client = 0;
	BOOST_REQUIRE_EQUAL(m.engine.clients->client_create(client), 0);
	gos_alloc_result r{};
	BOOST_REQUIRE_EQUAL(m.engine.clients->alloc(client, tenant, bytes, 8, 0, r), 0);
	buffer = r.buffer;
	return client;
}

std::uint64_t tenant_demand(Module &m, std::uint32_t tenant)
{
	gos_tenant_stats st{};
	BOOST_REQUIRE_EQUAL(m.engine.control->tenant_stats(tenant, st), 0);
	return st.demand;
}

} // namespace

BOOST_AUTO_TEST_CASE(agents_are_sent_to_the_device_and_tasks_are_bound)
{
	Node node;
	Module mod(0x1234);
	auto d = node.start(mod);
	Conn root(*d, 0), agent(*d, 1000);
	register_step(root, 7, 0, {1});
	register_task(root, 7, 0, ::getpid());
	auto bound = mod.bindings.at({::getpid(), 0});
	BOOST_REQUIRE_EQUAL(bound.size(), 1u);

	gos_req_hello hello{static_cast<std::uint32_t>(::getpid()), 0, 0, 1, 7};
	auto rep = agent.ask(GOS_REQ_HELLO, hello);
	BOOST_REQUIRE_EQUAL(rep.status, 0);
	gos_rep_hello h{};
	std::memcpy(&h, rep.body.data(), sizeof h);
	BOOST_TEST((h.flags & GOS_HELLO_FLAG_KERNEL));
	BOOST_TEST(h.client == 0u);
	BOOST_TEST(h.ngpus == 1u);
	BOOST_TEST(h.chunk_size == 2 * MiB);
	auto status = d->status_json();
	BOOST_TEST(status["engine"] == "kernel");
	BOOST_TEST(status["agents"] == 1);	// connected, though not an engine client of the daemon

	// Engine calls belong on the device; the job's view stays here.
	gos_req_alloc al{0, 8, 0, 0, 64 * MiB};
	auto refused = agent.ask(GOS_REQ_ALLOC, al);
	BOOST_TEST(refused.status == -EOPNOTSUPP);
	BOOST_TEST(refused.error.find("/dev/gpuoversub") != std::string::npos);
	std::uint64_t buffer = 0;
	std::uint32_t file = agent_alloc(mod, bound[0], 64 * MiB, buffer);
	gos_req_meminfo mi{0, 0};
	auto info = agent.ask(GOS_REQ_MEMINFO, mi);
	BOOST_REQUIRE_EQUAL(info.status, 0);
	gos_rep_meminfo m{};
	std::memcpy(&m, info.body.data(), sizeof m);
	BOOST_TEST(m.used == 64 * MiB);

	// A second step on another GPU: every binding now names both tenants.
	register_step(root, 7, 1, {0});
	BOOST_TEST(mod.bindings.at({::getpid(), 0}).size() == 2u);

	// The job ends while its process still holds memory in the module: the
	// binding goes at once, the tenant once the memory is freed.
	gos_req_job end{7};
	BOOST_REQUIRE_EQUAL(root.ask(GOS_REQ_JOB_END, end).status, 0);
	BOOST_TEST(mod.bindings.empty());
	BOOST_TEST(tenant_demand(mod, bound[0]) == 64 * MiB);
	BOOST_REQUIRE_EQUAL(mod.engine.clients->free(file, buffer), 0);
	d->persist_tick();
	gos_tenant_stats gone{};
	BOOST_TEST(mod.engine.control->tenant_stats(bound[0], gone) == -EINVAL);
	BOOST_TEST(std::filesystem::exists(node.cfg.policy.report_dir + "/job-7.json"));
}

BOOST_AUTO_TEST_CASE(a_restarted_daemon_keeps_the_tenants_of_the_same_module_load)
{
	Node node;
	Module mod(0x5678);
	auto d = node.start(mod);
	std::uint32_t tenant = 0;
	std::uint64_t buffer = 0;
	{
		Conn root(*d, 0);
		register_step(root, 9, 0, {0});
		register_task(root, 9, 0, ::getpid());
		tenant = mod.bindings.at({::getpid(), 0}).at(0);
	}
	agent_alloc(mod, tenant, 300 * MiB, buffer);	// 44 MiB over the GPU: some on the host
	d->persist_tick();
	d.reset();	// as kill -9 leaves it: records saved, the module untouched
	int created = mod.tenants_created;

	auto again = node.start(mod);
	BOOST_TEST(mod.tenants_created == created);	// adopted, not made anew
	BOOST_TEST(tenant_demand(mod, tenant) == 300 * MiB);
	Conn root(*again, 0);
	gos_req_job q{9};
	auto report = nlohmann::json::parse(root.ask(GOS_REQ_REPORT, q).body).get<gos::report::Report>();
	BOOST_TEST(report.gpus[0].peak_host == 44 * MiB);
	BOOST_TEST(report.gpus[0].bytes_host_placed == 44 * MiB);	// counted once
}

BOOST_AUTO_TEST_CASE(after_a_module_reload_the_tenants_are_made_anew_and_counters_kept)
{
	Node node;
	Module first(0x1111);
	auto d = node.start(first);
	std::uint64_t buffer = 0;
	{
		Conn root(*d, 0);
		register_step(root, 11, 0, {0});
		register_task(root, 11, 0, ::getpid());
	}
	agent_alloc(first, first.bindings.at({::getpid(), 0}).at(0), 300 * MiB, buffer);
	d->persist_tick();
	d.reset();

	Module second(0x2222);	// reloaded: the same tenant ids mean nothing now
	auto again = node.start(second);
	BOOST_TEST(second.tenants_created == 1);
	BOOST_TEST(second.bindings.count({::getpid(), 0}) == 1u);	// bound again
	Conn root(*again, 0);
	gos_req_job q{11};
	auto report = nlohmann::json::parse(root.ask(GOS_REQ_REPORT, q).body).get<gos::report::Report>();
	BOOST_TEST(report.gpus[0].bytes_host_placed == 44 * MiB);
}

BOOST_AUTO_TEST_CASE(tenants_no_record_names_are_removed_at_start)
{
	Node node;
	Module mod(0x3333);
	auto d = node.start(mod);
	{
		Conn root(*d, 0);
		register_step(root, 12, 0, {0});
	}
	d.reset();
	// As a crash between creating tenants and saving their records leaves
	// them: one empty, one holding a process's memory.
	std::uint32_t empty = 0, busy = 0;
	std::uint64_t buffer = 0;
	BOOST_REQUIRE_EQUAL(mod.engine.control->tenant_create(1, 100, 0, empty), 0);
	BOOST_REQUIRE_EQUAL(mod.engine.control->tenant_create(1, 100, 0, busy), 0);
	std::uint32_t file = agent_alloc(mod, busy, 8 * MiB, buffer);

	auto again = node.start(mod);
	std::vector<std::uint32_t> left;
	BOOST_REQUIRE_EQUAL(mod.engine.control->tenant_list(left), 0);
	BOOST_TEST(left.size() == 2u);	// job 12's, and the busy one, retiring
	BOOST_TEST(std::count(left.begin(), left.end(), empty) == 0);
	gos_tenant_stats st{};
	BOOST_REQUIRE_EQUAL(mod.engine.control->tenant_stats(busy, st), 0);
	BOOST_TEST(st.weight == 1u);
	BOOST_REQUIRE_EQUAL(mod.engine.clients->free(file, buffer), 0);
	again->persist_tick();
	BOOST_TEST(mod.engine.control->tenant_stats(busy, st) == -EINVAL);
}
