// The daemon's parts on their own: policy validation, the frame decoder,
// GPU locality from hwloc XML topologies, process identity, job records.
#define BOOST_TEST_MODULE daemon_parts
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "common/config/config.hpp"
#include "daemon/gpud/engine_backend.hpp"
#include "daemon/gpud/identity.hpp"
#include "daemon/gpud/jobs.hpp"
#include "daemon/gpud/policy.hpp"
#include "daemon/gpud/reconciler.hpp"
#include "daemon/gpud/locality.hpp"
#include "daemon/gpud/report.hpp"
#include "common/proto/wire.hpp"
#include "common/proto/client.hpp"
#include "common/util/rate_limit.hpp"
#include "tests/unit/common/config_error.hpp"

using namespace gos;

using gos_test::config_error;

BOOST_AUTO_TEST_CASE(the_shipped_example_policy_is_valid)
{
	config::Config c = config::load_config("config/gpuoversub.yaml");
	BOOST_TEST(c.start.socket == "/run/gpuoversub/gpuoversubd.sock");
	BOOST_TEST(c.policy.weights.qos.at("high") == 4.0);
	BOOST_TEST(c.start.simulated_gpus.empty());
}

BOOST_AUTO_TEST_CASE(policy_values_are_read)
{
	config::Config c = config::parse_config(
		"fairness: equal\nchunk_size: 4M\nreturn_interval: 20ms\norder_timeout: 2s\nmax_oversub: 2.5\n"
		"weights: {partition: {gpu: 2}, qos: {high: 4}}\nmin_share: {account: {phys: 0.25}}\n"
		"balloon: {period: 1s, low: 0.2, high: 0.6}\nadvice: {persist: 0s}\nhost_spill_limit: 1T\n"
		"reserve: 1G\nreports: {dir: /r, summary: no, keep: 30d, max_size: 10G}\nexporter: {textfile: /m.prom}\n"
		"simulated_gpus:\n  - {memory: 80G, numa_node: 1, pci_bus_id: '0000:17:00.0'}\n",
		"ok.yaml");
	BOOST_TEST((c.start.fairness == config::Fairness::weighted));
	BOOST_TEST(c.policy.equal_weights);
	BOOST_TEST(c.start.chunk_size == 4u << 20);
	BOOST_TEST(c.policy.return_interval_ns == 20'000'000u);
	BOOST_TEST(c.start.order_timeout_ns == 2'000'000'000u);
	BOOST_TEST(c.policy.max_oversub.plain == 2.5);	// a plain number, as before
	BOOST_TEST(c.policy.weights.partition.at("gpu") == 2.0);
	BOOST_TEST(c.policy.min_share.account.at("phys") == 0.25);
	BOOST_TEST(c.policy.balloon_period_ns == 1'000'000'000u);
	BOOST_TEST(c.start.advice_persist_ns == 0u);
	BOOST_TEST(c.policy.host_spill_limit == 1ULL << 40);
	BOOST_TEST(!c.policy.report_summary);
	BOOST_TEST(c.policy.report_keep_ns == 30ULL * 86400 * 1'000'000'000ULL);
	BOOST_TEST(c.policy.report_max_bytes == 10ULL << 30);
	BOOST_TEST(config::parse_config("", "d.yaml").policy.report_keep_ns == 90ULL * 86400 * 1'000'000'000ULL);
	BOOST_TEST(config::parse_config("reports: {keep: 0s}\n", "z.yaml").policy.report_keep_ns == 0u);
	BOOST_TEST(c.policy.exporter_textfile == "/m.prom");
	BOOST_REQUIRE_EQUAL(c.start.simulated_gpus.size(), 1u);
	BOOST_TEST(c.start.simulated_gpus[0].numa_node == 1);
	BOOST_TEST((config::parse_config("", "empty.yaml").start.fairness == config::Fairness::weighted));
	BOOST_TEST(config::parse_config("", "empty.yaml").start.chunk_size == 32u << 20);	// the shipped policy's
	BOOST_TEST(!config::parse_config("", "empty.yaml").policy.equal_weights);
	config::Config ident = config::parse_config("slurm_cgroup: /slurm.scope\nmax_buffers_per_job: 100\n", "i.yaml");
	BOOST_TEST(ident.policy.slurm_cgroup == "/slurm.scope");
	BOOST_TEST(ident.policy.max_buffers_per_job == 100u);
	BOOST_TEST(config::parse_config("", "empty.yaml").policy.slurm_cgroup == "/system.slice/slurmstepd.scope");
	BOOST_TEST(config::parse_config("", "empty.yaml").policy.max_buffers_per_job == 65536u);
	config::Config lending = config::parse_config("lending: {backoff: 250ms, backoff_max: 1m}\n", "l.yaml");
	BOOST_TEST(lending.start.lend_backoff_ns == 250'000'000u);
	BOOST_TEST(lending.start.lend_backoff_max_ns == 60'000'000'000u);
	BOOST_TEST(config::parse_config("lending: {backoff: 0s}\n", "off.yaml").start.lend_backoff_ns == 0u);
	gos_config defaults;
	gos_config_defaults(&defaults);
	config::Config none = config::parse_config("", "empty.yaml");	// the engine's own defaults
	BOOST_TEST(none.start.lend_backoff_ns == defaults.lend_backoff_ns);
	BOOST_TEST(none.start.lend_backoff_max_ns == defaults.lend_backoff_max_ns);
	BOOST_TEST(gpud::engine_config(lending.start).lend_backoff_max_ns == 60'000'000'000u);
	BOOST_TEST(config::parse_config("", "empty.yaml").policy.max_ranks_per_job == 1024u);
	BOOST_TEST(config::parse_config("max_ranks_per_job: 8\n", "r.yaml").policy.max_ranks_per_job == 8u);
	// A job that does not answer: refused by default, never killed unless asked.
	BOOST_TEST(none.policy.unresponsive_after == 3u);
	BOOST_TEST((none.policy.on_unresponsive == config::Unresponsive::refuse));
	auto killing = config::parse_config("on_unresponsive: kill\nunresponsive_after: 1\n", "k.yaml");
	BOOST_TEST((killing.policy.on_unresponsive == config::Unresponsive::kill));
	BOOST_TEST(killing.policy.unresponsive_after == 1u);
}

BOOST_AUTO_TEST_CASE(every_bad_policy_names_file_line_and_column)
{
	struct { const char *yaml, *expect; } cases[] = {
		{"fairness: fair\n", "p.yaml:1:11: 'fairness' must be one of"},
		{"colour: red\n", "p.yaml:1:9: unknown key 'colour'"},
		{"chunk_size: 3000\n", "p.yaml:1:13: 'chunk_size' must be a byte size"},
		{"chunk_size: 100000\n", "p.yaml:1:13: 'chunk_size' must be at most 1G and a multiple of 4K"},
		{"return_interval: fast\n", "p.yaml:1:18: 'return_interval' must be a duration"},
		{"return_interval: 0s\n", "p.yaml:1:18: 'return_interval' must be a duration such as 500ms, 10s or 5m above zero"},
		{"reports: {keep: forever}\n", "p.yaml:1:17: 'reports.keep' must be a duration such as 500ms, 10s or 5m, not 'forever'"},
		{"reports: {max_size: lots}\n", "p.yaml:1:21: 'reports.max_size' must be a byte size"},
		{"reports: {rotate: yes}\n", "p.yaml:1:19: unknown key 'rotate' in 'reports'; use dir, summary, admin_comment, keep or max_size"},
		{"max_oversub: 100\n", "p.yaml:1:14: 'max_oversub' must be a number from 1 to 64"},
		{"weights: {partition: {gpu: -1}}\n", "p.yaml:1:28: 'weights.partition.gpu' must be a number"},
		{"weights: {team: {a: 1}}\n", "p.yaml:1:17: unknown key 'team' in 'weights'"},
		{"min_share: {qos: {high: 2}}\n", "p.yaml:1:25: 'min_share.qos.high' must be a number from 0 to 1"},
		{"balloon: {low: 0.9, high: 0.1}\n", "p.yaml:1:1: 'balloon.low' must not exceed 'balloon.high'"},
		{"balloon: {enabled: maybe}\n", "p.yaml:1:20: 'balloon.enabled' must be true or false"},
		{"socket: relative.sock\n", "p.yaml:1:9: 'socket' must be an absolute path"},
		{"simulated_gpus: {memory: 1G}\n", "p.yaml:1:17: 'simulated_gpus' must be a list"},
		{"simulated_gpus:\n  - {numa_node: 0}\n", "p.yaml:2:5: a simulated GPU needs 'memory'"},
		{"simulated_gpus:\n  - {memory: 1G, cores: 4}\n", "p.yaml:2:25: unknown key 'cores' in a simulated GPU"},
		{"simulated_gpus:\n  - {memory: 1G, uuid: 3}\n", "p.yaml:2:24: 'uuid' must be a GPU's UUID as NVML names it"},
		{"simulated_gpus:\n  - {memory: 1G, uuid: MIG-12x4}\n", "p.yaml:2:24: 'uuid' must be a GPU's UUID"},
		{"reserve: 1G\nreserve: 2G\n", "p.yaml:2:1: 'reserve' is given twice"},
		{"- a\n- b\n", "p.yaml:1:1: the policy must be a mapping"},
		{"weights: [1, 2\n", "p.yaml:2:1: not valid YAML"},
		{"fairness: [weighted]\n", "p.yaml:1:11: 'fairness' must be a single value"},
		{"slurm_cgroup: system.slice\n", "p.yaml:1:15: 'slurm_cgroup' must be an absolute path"},
		{"max_buffers_per_job: 0\n", "p.yaml:1:22: 'max_buffers_per_job' must be a number from 1 to"},
		{"max_buffers_per_job: 2.5\n", "p.yaml:1:22: 'max_buffers_per_job' must be a whole number"},
		{"lending: {backoff: soon}\n", "p.yaml:1:20: 'lending.backoff' must be a duration such as 500ms"},
		{"lending: {backoff: 2s, backoff_max: 1s}\n", "p.yaml:1:1: 'lending.backoff_max' must not be shorter than 'lending.backoff'"},
		{"lending: {after: 1s}\n", "p.yaml:1:18: unknown key 'after' in 'lending'; use backoff or backoff_max"},
		{"state_dir: /var/lib/g\nreports: {dir: /var/lib/g/}\n",
		 "p.yaml:1:1: 'state_dir' and 'reports.dir' are the same directory (/var/lib/g); job records and reports"},
		{"max_ranks_per_job: 100000\n", "p.yaml:1:20: 'max_ranks_per_job' must be a number from 1 to 65536"},
		{"on_unresponsive: stop\n", "p.yaml:1:18: 'on_unresponsive' must be one of"},
		{"unresponsive_after: 0\n", "p.yaml:1:21: 'unresponsive_after' must be a number from 1 to 100000"},
	};
	for (auto &c : cases) {
		std::string got = config_error(c.yaml);
		BOOST_TEST(got.rfind(c.expect, 0) == 0u, "for:\n" << c.yaml << "got: " << got);
	}
	BOOST_CHECK_THROW(config::load_config("/nonexistent/policy.yaml"), config::ConfigError);
}

BOOST_AUTO_TEST_CASE(a_reload_names_each_setting_fixed_at_start)
{
	config::Config running = config::parse_config("fairness: weighted\n", "a.yaml");
	config::Config next = config::parse_config(
		"fairness: equal\nchunk_size: 4M\nreserve: 1G\nweights: {qos: {high: 2}}\nreturn_interval: 1s\n", "b.yaml");
	// equal stays in the engine's weighted family; weights and intervals are policy.
	BOOST_TEST(config::restart_only_changes(running.start, next.start) ==
		   (std::vector<std::string>{"chunk_size", "reserve"}), boost::test_tools::per_element());
	config::Config fcfs = config::parse_config("fairness: fcfs\nsimulated_gpus: [{memory: 1G}]\n", "c.yaml");
	BOOST_TEST(config::restart_only_changes(running.start, fcfs.start) ==
		   (std::vector<std::string>{"fairness (to or from fcfs or static)", "simulated_gpus"}),
		   boost::test_tools::per_element());
	BOOST_TEST(config::restart_only_changes(next.start, next.start).empty());
}

BOOST_AUTO_TEST_CASE(decoder_takes_frames_in_pieces_and_rejects_bad_ones)
{
	gos_req_alloc a{1, 5, 0, 0, 4096};
	proto::Bytes two = proto::encode(GOS_REQ_ALLOC, 7, a);
	proto::Bytes second = proto::encode(GOS_REQ_STATUS, 8, nullptr, 0);
	two.insert(two.end(), second.begin(), second.end());
	proto::Decoder d;
	for (std::uint8_t byte : two)
		d.feed(&byte, 1);	// one byte at a time
	auto f1 = d.next(), f2 = d.next();
	BOOST_REQUIRE(f1 && f2);
	BOOST_TEST(!d.next());
	BOOST_TEST(f1->hdr.seq == 7u);
	gos_req_alloc back;
	BOOST_TEST(!proto::decode(*f1, back));
	BOOST_TEST(back.size == 4096u);
	BOOST_TEST(f2->hdr.type == GOS_REQ_STATUS);

	auto bad = [](gos_wire_hdr h) {
		proto::Decoder dec;
		dec.feed(reinterpret_cast<std::uint8_t *>(&h), sizeof h);
		BOOST_TEST(!dec.next());
		return dec.error();
	};
	BOOST_TEST(bad({0xdeadbeef, 1, GOS_REQ_STATUS, 1, 0}).find("bad magic") == 0u);
	BOOST_TEST(bad({GOS_WIRE_MAGIC, 9, GOS_REQ_STATUS, 1, 0}).find("protocol version 9") == 0u);
	BOOST_TEST(bad({GOS_WIRE_MAGIC, GOS_WIRE_VERSION, 77, 1, 0}).find("unknown message type 77") == 0u);
	BOOST_TEST(bad({GOS_WIRE_MAGIC, GOS_WIRE_VERSION, GOS_REQ_ALLOC, 1, 3}).find("message type 2 with 3 payload bytes") == 0u);
	BOOST_TEST(bad({GOS_WIRE_MAGIC, GOS_WIRE_VERSION, GOS_WIRE_REPLY, 1, 1u << 30}).find("exceeds the limit") != std::string::npos);

	proto::Bytes rep = proto::encode_reply(3, -22, "no", "xy", 2);
	proto::Decoder dr;
	dr.feed(rep.data(), rep.size());
	auto fr = dr.next();
	BOOST_REQUIRE(fr);
	auto r = proto::decode_reply(*fr);
	BOOST_REQUIRE(r);
	BOOST_TEST(r->status == -22);
	BOOST_TEST(r->error == "no");
	BOOST_TEST(std::string(r->body.begin(), r->body.end()) == "xy");
}

// The daemon's decoder refuses a type only the daemon sends as soon as the
// header is whole: a stranger's 1 MiB "reply" is never buffered.
BOOST_AUTO_TEST_CASE(request_decoder_refuses_a_daemon_only_type_at_its_header)
{
	for (std::uint16_t type : {std::uint16_t(GOS_WIRE_REPLY), std::uint16_t(GOS_WIRE_ORDER)}) {
		gos_wire_hdr h{GOS_WIRE_MAGIC, GOS_WIRE_VERSION, type, 1,
			       type == GOS_WIRE_REPLY ? GOS_WIRE_MAX_PAYLOAD : std::uint32_t(sizeof(gos_wire_order))};
		proto::Decoder dec(proto::Decoder::Accepts::requests);
		dec.feed(reinterpret_cast<std::uint8_t *>(&h), sizeof h);	// the header alone
		BOOST_TEST(!dec.next());
		BOOST_TEST(dec.failed());
		BOOST_TEST(dec.error().find("is sent only by the daemon") != std::string::npos);
		proto::Decoder any;	// a client's decoder takes them
		any.feed(reinterpret_cast<std::uint8_t *>(&h), sizeof h);
		BOOST_TEST(!any.next());
		BOOST_TEST(!any.failed());
		BOOST_TEST(any.partial());
	}
	gos_wire_hdr ok{GOS_WIRE_MAGIC, GOS_WIRE_VERSION, GOS_REQ_STATUS, 1, 0};
	BOOST_TEST(!proto::check_request_header(ok));
	proto::Decoder dec(proto::Decoder::Accepts::requests);
	dec.feed(reinterpret_cast<std::uint8_t *>(&ok), sizeof ok);
	BOOST_TEST(dec.next().has_value());
	BOOST_TEST(!dec.partial());
}

BOOST_AUTO_TEST_CASE(root_socket_sits_beside_the_public_one)
{
	BOOST_TEST(proto::root_socket_of("/run/gpuoversub/gpuoversubd.sock") == "/run/gpuoversub/gpuoversubd.root.sock");
	BOOST_TEST(proto::root_socket_of("/tmp/d/socket") == "/tmp/d/socket.root");
	BOOST_TEST(proto::root_socket_of(".sock") == ".sock.root");
}

// One line at once, then at most one per interval with the count left out.
BOOST_AUTO_TEST_CASE(rate_limit_logs_once_per_interval_with_the_count_left_out)
{
	RateLimit limit(std::chrono::seconds(10));
	RateLimit::Clock::time_point t0{std::chrono::seconds(100)};
	auto left_out = [&](int s) { return limit.allow(t0 + std::chrono::seconds(s)).value_or(999); };
	BOOST_TEST(left_out(0) == 0u);
	BOOST_TEST(left_out(1) == 999u);	// left out
	BOOST_TEST(left_out(9) == 999u);
	BOOST_TEST(left_out(10) == 2u);
	BOOST_TEST(left_out(30) == 0u);
}

BOOST_AUTO_TEST_CASE(gpu_numa_nodes_from_an_hwloc_topology)
{
	gpud::Topology topo("tests/data/topo-2socket-4gpu.xml");
	BOOST_TEST(topo.numa_node_of("0000:17:00.0") == 0);
	BOOST_TEST(topo.numa_node_of("0000:31:00.0") == 0);
	BOOST_TEST(topo.numa_node_of("0000:b1:00.0") == 1);
	BOOST_TEST(topo.numa_node_of("00000000:B1:00.0") == 1);	// NVML's spelling
	BOOST_TEST(topo.numa_node_of("0000:ca:00.0") == -1);	// spans both nodes
	BOOST_TEST(topo.numa_node_of("0000:99:00.0") == -1);	// not there
	BOOST_TEST(topo.numa_node_of("garbage") == -1);
	BOOST_CHECK_THROW(gpud::Topology("/nonexistent.xml"), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(process_identity_from_proc)
{
	auto me_now = gpud::proc_stat(::getpid());
	BOOST_REQUIRE(me_now);
	BOOST_TEST(me_now->ppid == ::getppid());
	BOOST_TEST(!gpud::proc_stat(0x7ffffff0));
	pid_t me = ::getpid(), parent = ::getppid();
	std::uint64_t parent_start = gpud::proc_stat(parent)->start;
	BOOST_TEST(*gpud::registered_ancestor(me, [&](pid_t p, std::uint64_t start) {
		return p == parent && start == parent_start;
	}) == parent);
	// The same pid with another start time is another process: not registered.
	BOOST_TEST(!gpud::registered_ancestor(me, [&](pid_t p, std::uint64_t start) {
		return p == parent && start == parent_start + 1;
	}));
	BOOST_TEST(gpud::pid_max() >= 2);

	char dir[] = "/tmp/gos-proc-XXXXXX";
	BOOST_REQUIRE(::mkdtemp(dir));
	std::string root = dir;
	::mkdir((root + "/42").c_str(), 0755);
	std::ofstream(root + "/42/stat") << "42 (odd (name) x) S 7 42 42 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 "
					     "987654 1 2 3\n";
	::mkdir((root + "/43").c_str(), 0755);
	std::ofstream(root + "/43/stat") << "43 (short) S 7\n";
	::mkdir((root + "/44").c_str(), 0755);
	std::ofstream(root + "/44/stat") << "44 (suspended) T 7 44 44 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 "
					     "987655 1 2 3\n";
	BOOST_TEST(gpud::proc_stat(44, root.c_str())->stopped);
	BOOST_TEST(!gpud::proc_stat(42, root.c_str())->stopped);
	BOOST_TEST(gpud::proc_stat(42, root.c_str())->ppid == 7);
	BOOST_TEST(gpud::proc_stat(42, root.c_str())->start == 987654u);
	BOOST_TEST(!gpud::proc_stat(43, root.c_str()));	// no start time: not trusted
	std::ofstream(root + "/mounts") << "cgroup /sys/fs/cgroup/cpu cgroup rw 0 0\n"
					   "cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n";
	BOOST_TEST(gpud::cgroup2_mount((root + "/mounts").c_str()) == "/sys/fs/cgroup/unified");
	BOOST_TEST(gpud::cgroup2_mount((root + "/none").c_str()) == "/sys/fs/cgroup");
	BOOST_REQUIRE(std::system(("mkdir -p " + root + "/sys/kernel && echo 4096 >" + root + "/sys/kernel/pid_max").c_str()) == 0);
	BOOST_TEST(gpud::pid_max(root.c_str()) == 4096);
	// A task in a container names itself by its innermost pid (NSpid's last).
	std::ofstream(root + "/42/status") << "Name:\tx\nNSpid:\t42\t7\t2\nNSpgid:\t42\n";
	BOOST_TEST(gpud::own_pid_is(42, 42, root.c_str()));
	BOOST_TEST(gpud::own_pid_is(42, 2, root.c_str()));
	BOOST_TEST(!gpud::own_pid_is(42, 7, root.c_str()));	// a middle namespace's is not its own
	BOOST_TEST(!gpud::own_pid_is(43, 2, root.c_str()));	// no status: only its own number
	BOOST_TEST(std::system(("rm -rf " + root).c_str()) == 0);
}

// A node for slurm_job_cgroup under a temporary directory: a cgroup v2
// mount (cg) and a /proc (root) whose processes it makes; removed at the
// end.
struct FakeNode {
	std::string root, cg;
	int last_pid = 40;
	FakeNode()
	{
		char dir[] = "/tmp/gos-cg-XXXXXX";
		BOOST_REQUIRE(::mkdtemp(dir));
		root = dir;
		cg = root + "/cg";
	}
	~FakeNode() { BOOST_TEST(std::system(("rm -rf " + root).c_str()) == 0); }
	// A process whose /proc/PID/cgroup says `cgroups`.
	int process(const std::string &cgroups)
	{
		::mkdir((root + "/" + std::to_string(++last_pid)).c_str(), 0755);
		std::ofstream(root + "/" + std::to_string(last_pid) + "/cgroup") << cgroups;
		return last_pid;
	}
	// A process in the v2 cgroup PATH, made (root's).
	int in(const std::string &path)
	{
		BOOST_REQUIRE(std::system(("mkdir -p " + cg + path).c_str()) == 0);
		return process("0::" + path + "\n");
	}
	std::optional<gpud::JobCgroup> job_cgroup(int pid, const gpud::SlurmCgroups &where) const
	{
		return gpud::slurm_job_cgroup(pid, where, root.c_str());
	}
};

// Only Slurm's own job cgroup, root's, on the v2 line, under the configured
// root, ties a process to a job: never a job_N a user made elsewhere.
BOOST_AUTO_TEST_CASE(slurm_cgroup_rules)
{
	FakeNode node;
	const std::string &cg = node.cg;
	gpud::SlurmCgroups where{cg, "/system.slice/slurmstepd.scope"};
	BOOST_REQUIRE(std::system(("mkdir -p " + cg + "/system.slice/slurmstepd.scope/job_1234/step_0/user/task_0 " +
				   cg + "/user.slice/user-1000.slice/user@1000.service/job_77 " + cg +
				   "/system.slice/slurmstepd.scope/job_88").c_str()) == 0);
	BOOST_REQUIRE(::chown((cg + "/system.slice/slurmstepd.scope/job_88").c_str(), 1000, 1000) == 0);
	int task = node.process("12:memory:/slurm/uid_0/job_9/step_0\n0::/system.slice/slurmstepd.scope/job_1234/step_0/user/task_0\n");
	int job_dir = node.process("0::/system.slice/slurmstepd.scope/job_1234\n");
	int delegated = node.process("0::/user.slice/user-1000.slice/user@1000.service/job_77\n");
	int v1_only = node.process("4:memory:/slurm/uid_0/job_1234/step_0\n0::/\n");
	int users_job = node.process("0::/system.slice/slurmstepd.scope/job_88/step_0\n");
	int nested = node.process("0::/system.slice/slurmstepd.scope/x/job_1234\n");
	int not_a_job = node.process("0::/system.slice/slurmstepd.scope/job_12x\n");
	int no_dir = node.process("0::/system.slice/slurmstepd.scope/job_5/step_0\n");
	struct stat st{};
	BOOST_REQUIRE(::stat((cg + "/system.slice/slurmstepd.scope/job_1234").c_str(), &st) == 0);
	auto found = node.job_cgroup(task, where);
	BOOST_REQUIRE(found);
	BOOST_TEST(found->job == 1234u);
	BOOST_TEST(found->id == st.st_ino);	// the kernel binding's id: the job directory's inode
	BOOST_TEST(node.job_cgroup(job_dir, where)->job == 1234u);
	BOOST_TEST(!node.job_cgroup(delegated, where));
	BOOST_TEST(!node.job_cgroup(v1_only, where));
	BOOST_TEST(!node.job_cgroup(users_job, where));
	BOOST_TEST(!node.job_cgroup(nested, where));
	BOOST_TEST(!node.job_cgroup(not_a_job, where));
	BOOST_TEST(!node.job_cgroup(no_dir, where));
	BOOST_TEST(!node.job_cgroup(4242, where));	// no such process
	// A Slurm root a user owns makes no job of its children.
	BOOST_REQUIRE(::chown((cg + "/system.slice/slurmstepd.scope").c_str(), 1000, 1000) == 0);
	BOOST_TEST(!node.job_cgroup(task, where));
	// Trailing slashes in the setting are the same root.
	BOOST_REQUIRE(::chown((cg + "/system.slice/slurmstepd.scope").c_str(), 0, 0) == 0);
	where.root += "/";
	BOOST_TEST(node.job_cgroup(task, where)->job == 1234u);
}

// Slurm 26.05 names a job's cgroup by its SLUID (cgroup.conf's
// CgroupJobIdPaths=no, the default): a job with no id in its name, whose
// job the reconciler knows by the cgroup's id, as its registered task
// was seen in it. Only Slurm's exact form is one.
BOOST_AUTO_TEST_CASE(slurm_cgroup_sluid_names)
{
	FakeNode node;
	const std::string scope = "/system.slice/slurmstepd.scope";
	gpud::SlurmCgroups where{node.cg, scope};
	auto task_of = [&](const std::string &job_dir) { return node.in(scope + "/" + job_dir + "/step_0/user/task_0"); };
	// The tree of cgroup.conf(5) of 26.05: .../slurmstepd.scope/sEKNKTV3WPV500/step_0/...
	int task = task_of("sEKNKTV3WPV500");
	struct stat st{};
	BOOST_REQUIRE(::stat((node.cg + scope + "/sEKNKTV3WPV500").c_str(), &st) == 0);
	auto found = node.job_cgroup(task, where);
	BOOST_REQUIRE(found);
	BOOST_TEST(found->job == 0u);
	BOOST_TEST(found->id == st.st_ino);
	BOOST_TEST(node.job_cgroup(task_of("sFZZZZZZZZZZZZ"), where).has_value());	// 2^64 - 1
	for (const char *not_one : {"sEKNKTV3WPV50", "sEKNKTV3WPV5000", "SEKNKTV3WPV500", "sekNKTV3WPV500",
				    "sEKNKTV3WPV5I0", "sGKNKTV3WPV500", "job_0", "job_", "tEKNKTV3WPV500"})
		BOOST_TEST(!node.job_cgroup(task_of(not_one), where).has_value(), not_one);
	// The reconciler's signs: a job's cgroup holds a process by its name or by its id.
	gpud::CgroupsInUse in_use{{1234}, {found->id}};
	gpud::Job named, sluid, other;
	named.id = 1234;
	sluid.id = 99;
	sluid.cgroup = found->id;
	other.id = 98;
	BOOST_TEST(in_use.hold(named));
	BOOST_TEST(in_use.hold(sluid));
	BOOST_TEST(!in_use.hold(other));
}

// Debian's Slurm is built with --enable-multiple-slurmd, and always names
// its scope "<NodeName>_slurmstepd.scope": the default root stands for it;
// nothing else beside it does, and a root set otherwise means itself.
BOOST_AUTO_TEST_CASE(slurm_cgroup_multiple_slurmd_scope)
{
	FakeNode node;
	gpud::SlurmCgroups where{node.cg, "/system.slice/slurmstepd.scope"};
	auto task_in = [&](const std::string &scope) { return node.in("/system.slice/" + scope + "/job_7/step_0/user/task_0"); };
	int task = task_in("gosvm_slurmstepd.scope");
	auto found = node.job_cgroup(task, where);
	BOOST_REQUIRE(found);
	BOOST_TEST(found->job == 7u);
	for (const char *not_one : {"_slurmstepd.scope", "gosvmslurmstepd.scope", "gosvm_slurmstepd.scope.d", "gosvm_slurmd.scope"})
		BOOST_TEST(!node.job_cgroup(task_in(not_one), where).has_value(), not_one);
	// The scope is Slurm's only if root owns it.
	const std::string scope_dir = node.cg + "/system.slice/gosvm_slurmstepd.scope";
	BOOST_REQUIRE(::chown(scope_dir.c_str(), 1000, 1000) == 0);
	BOOST_TEST(!node.job_cgroup(task, where).has_value());
	BOOST_REQUIRE(::chown(scope_dir.c_str(), 0, 0) == 0);
	// A root the admin named is that one alone.
	where.root = "/system.slice/gosvm_slurmstepd.scope";
	BOOST_TEST(node.job_cgroup(task, where)->job == 7u);
	where.root = "/system.slice/other_slurmstepd.scope";
	BOOST_TEST(!node.job_cgroup(task, where).has_value());
}

BOOST_AUTO_TEST_CASE(job_records_round_trip_and_policy)
{
	gpud::Job j;
	j.id = 77;
	j.uid = 1000;
	j.partition = "gpu";
	j.qos = "high";
	j.factor_milli = 3000;
	j.gpus.resize(2);
	j.gpus[1].node_gpu = 3;
	j.gpus[1].base.bytes_evicted = 123;
	j.steps = {0, 1};
	j.tasks = {{100, {555, 0}}, {200, {777, 1}}};
	j.latency.add(5000);
	j.rank(2, 100, 1)->allocs = 9;
	gpud::Job back = gpud::job_from_json(nlohmann::json::parse(gpud::to_json(j).dump()));
	BOOST_TEST(back.gpus[1].node_gpu == 3u);
	BOOST_TEST(back.gpus[1].base.bytes_evicted == 123u);
	BOOST_TEST(back.tasks.at(200).start == 777u);
	BOOST_TEST(back.tasks.at(200).step == 1u);
	// A record from before start times were kept: its pids are not trusted.
	auto old = gpud::to_json(j);
	old.erase("tasks");
	old["pids"] = {100, 200};
	BOOST_TEST(gpud::job_from_json(old).tasks.empty());
	BOOST_TEST(back.rank(2, 100, 1)->allocs == 9u);
	BOOST_TEST(!back.rank(3, 100, 1));	// full: one rank, and this one is new
	BOOST_TEST(back.latency.count() == 1u);
	BOOST_CHECK_THROW(gpud::job_from_json(nlohmann::json::parse("{\"version\": 2}")), std::exception);

	config::Config c = config::parse_config("max_oversub: 2\nweights: {partition: {gpu: 2}, qos: {high: 3}}\n"
						"min_share: {qos: {high: 0.1}, partition: {gpu: 0.3}}\n", "p.yaml");
	j.gpus[1].shards = {1, 4, ""};
	back = gpud::job_from_json(nlohmann::json::parse(gpud::to_json(j).dump()));
	BOOST_TEST(back.gpus[1].shards.held == 1u);
	BOOST_TEST(back.gpus[1].shards.total == 4u);
	BOOST_TEST(back.gpus[0].shards.total == 0u);
	gpud::JobPolicy p = gpud::policy_for(c, j, j.gpus[0], {});
	BOOST_TEST(p.weight.nominal == 6.0);
	BOOST_TEST(gpud::policy_for(c, j, j.gpus[1], {}).weight.nominal == 1.5);	// a quarter of the GPU
	BOOST_TEST(p.factor == 2.0);	// clamped to max_oversub
	BOOST_TEST(p.min_share == 0.3);
	BOOST_TEST(gpud::engine_weight(6.0) == 600u);
	BOOST_TEST(gpud::engine_weight(1e9) == 65535u);
	BOOST_TEST(gpud::engine_weight(0) == 1u);

	gpud::LatencyHistogram h;
	for (int i = 0; i < 99; i++)
		h.add(10'000);
	h.add(10'000'000);
	BOOST_TEST(h.percentile_us(0.5) >= 10.0);
	BOOST_TEST(h.percentile_us(0.5) < 15.0);
	BOOST_TEST(h.percentile_us(0.999) >= 10'000.0);

	// A daemon restart under the job: its record keeps what each GPU lost,
	// and the report and its summary say so.
	j.restarts = {{1764108000, {true, false}}};
	j.restarts_omitted = 2;
	back = gpud::job_from_json(nlohmann::json::parse(gpud::to_json(j).dump()));
	BOOST_TEST(back.restarts.size() == 1u);
	BOOST_TEST((back.restarts[0].kept == std::vector<bool>{true, false}));
	BOOST_TEST(back.restarts_omitted == 2u);

	auto rep = gpud::build_report(back, {}, {});
	BOOST_TEST(rep.daemon_restarts[0].at == "2025-11-25T22:00:00Z");
	BOOST_TEST(rep.daemon_restarts[0].gpus[1].gpu == 3u);
	BOOST_TEST(!rep.daemon_restarts[0].gpus[1].kept);
	BOOST_TEST(gos::report::report_summary(rep).find("gpuoversubd restarted at 2025-11-25T22:00:00Z: GPU 0 () kept its counters; "
						  "GPU 3 () counters restarted from the saved record\n  and 2 more restart(s)\n") !=
		   std::string::npos);
	BOOST_TEST(rep.bytes_evicted == 123u);
	BOOST_TEST(rep.ranks.size() == 1u);
	BOOST_TEST(gos::report::report_summary(rep).find("gpuoversub report for job 77") == 0u);
	BOOST_TEST(rep.node.size() > 0u);	// the reports of a job's nodes tell apart
}

// CounterBase keeps the counters and peaks of tenant_stats.def, by name.
BOOST_AUTO_TEST_CASE(job_counters_follow_the_tenant_stats_list)
{
	gos_tenant_stats st{};
	st.bytes_evicted = 5;
	st.peak_host = 7;
	st.failed_orders = 2;
	st.resident = 99;
	gpud::CounterBase c = gpud::CounterBase::of(st);
	nlohmann::json j = c;
	BOOST_TEST(j["bytes_evicted"] == 5u);
	BOOST_TEST(j["peak_host"] == 7u);
	BOOST_TEST(j["failed_orders"] == 2u);
	BOOST_TEST(!j.contains("resident"));	// a gauge is no counter to carry over
	std::size_t kept = 0;
#define GOS_TENANT_STAT(type, name, kind, help) kept += std::string(#kind) == "counter" || std::string(#kind) == "peak";
#include <gpuoversub/tenant_stats.def>
	BOOST_TEST(j.size() == kept);

	gpud::CounterBase later{};
	later.bytes_evicted = 1;
	later.peak_host = 3;
	c.add(later);
	BOOST_TEST(c.bytes_evicted == 6u);	// summed
	BOOST_TEST(c.peak_host == 7u);		// the larger
	// A record written before the list grew reads the new fields as 0.
	auto old = nlohmann::json::parse(R"({"bytes_evicted": 4})").get<gpud::CounterBase>();
	BOOST_TEST(old.bytes_evicted == 4u);
	BOOST_TEST(old.failed_orders == 0u);
}

BOOST_AUTO_TEST_CASE(the_balloon_judges_a_job_only_on_a_full_window)
{
	gpud::ActivityWindow w;
	for (unsigned i = 1; i < gpud::ActivityWindow::periods; i++)
		BOOST_TEST(!w.observe(false).has_value());	// a new job loading its data is not idle yet
	BOOST_TEST(w.observe(false).value() == 0.0);
	BOOST_TEST(w.observe(true).value() == 0.125);
	for (unsigned i = 0; i < gpud::ActivityWindow::periods; i++)
		w.observe(true);
	BOOST_TEST(w.observe(false).value() == 0.875);	// only the last eight periods count
}
