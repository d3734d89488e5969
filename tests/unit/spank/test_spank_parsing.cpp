// The SPANK plugin's parsing, without Slurm: option values, the ceiling,
// plugstack arguments, GPU lists and LD_PRELOAD.
#define BOOST_TEST_MODULE spank_parsing
#include <boost/test/unit_test.hpp>

#include "common/config/oversub.hpp"
#include "spank/plugstack_args.hpp"
#include "spank/step_env.hpp"

using namespace gos::spank;
using namespace gos::config;

BOOST_AUTO_TEST_CASE(option_values)
{
	std::string why;
	BOOST_TEST((parse_request("", why)->kind == Request::Kind::on));
	BOOST_TEST((parse_request("off", why)->kind == Request::Kind::off));
	auto f = parse_request("1.5", why);
	BOOST_TEST((f->kind == Request::Kind::factor));
	BOOST_TEST(f->factor_milli() == 1500u);
	auto s = parse_request("40G", why);
	BOOST_TEST((s->kind == Request::Kind::size));
	BOOST_TEST(s->size == 40ULL << 30);
	// Day-one spellings: any case, and a factor written as 2x.
	for (const char *off : {"OFF", "Off", "no"})
		BOOST_TEST_CONTEXT(off) { BOOST_TEST((parse_request(off, why)->kind == Request::Kind::off)); }
	BOOST_TEST((parse_request("ON", why)->kind == Request::Kind::on));
	BOOST_TEST(parse_request("2x", why)->factor_milli() == 2000u);
	BOOST_TEST(parse_request("1.5X", why)->factor_milli() == 1500u);
	BOOST_TEST((parse_request("2g", why)->kind == Request::Kind::size));	// sizes already took any case
	for (const char *bad : {"lots", "-2", "x", "2xx", "nan", "inf", "0G", "1e9", "-1x"}) {
		BOOST_TEST_CONTEXT(bad) { BOOST_TEST(!parse_request(bad, why).has_value()); }
	}
	parse_request("lots", why);
	BOOST_TEST(why.find("accepted: on, off (any case), a FACTOR") != std::string::npos);
	// A bare option forwarded from sbatch to srun arrives as "(null)".
	BOOST_TEST(option_value("(null)").empty());
	BOOST_TEST(option_value(nullptr).empty());
	BOOST_TEST(option_value("2") == "2");
}

BOOST_AUTO_TEST_CASE(the_ceiling_clamps_or_refuses_factors_only)
{
	std::string msg, why;
	Chosen<double> four{4, "max_oversub.partition.gpu"};
	auto r = apply_ceiling(*parse_request("8", why), four, false, msg);
	BOOST_TEST(r->factor == 4);
	BOOST_TEST(msg == "--gpu-mem-oversub=8 is clamped to this cluster's ceiling of 4 (max_oversub.partition.gpu)");
	BOOST_TEST(!apply_ceiling(*parse_request("8", why), four, true, msg).has_value());
	BOOST_TEST(msg == "--gpu-mem-oversub=8 is refused: this cluster allows a factor of at most 4 (max_oversub.partition.gpu)");
	BOOST_TEST(apply_ceiling(*parse_request("3", why), four, true, msg)->factor == 3);
	BOOST_TEST(msg.empty());
	BOOST_TEST(apply_ceiling(*parse_request("900G", why), four, true, msg).has_value());
}

BOOST_AUTO_TEST_CASE(plugstack_arguments)
{
	const char *good[] = {"socket=/run/x.sock", "agent=/opt/g/lib/libgpuoversub.so", "mpi_hooks=never",
			      "on_daemon_down=fail", "report_admin_comment=yes", "config=/etc/g.yaml"};
	auto a = parse_plugstack_args(6, const_cast<char **>(good), "/usr/lib/libgpuoversub.so");
	BOOST_TEST(a.errors.empty());
	BOOST_TEST(a.socket == "/run/x.sock");
	BOOST_TEST(a.mpi_hooks_lib == "/opt/g/lib/libgpuoversub_mpi.so");
	BOOST_TEST((a.mpi_hooks == MpiHooks::never));
	BOOST_TEST(a.fail_when_daemon_down);
	BOOST_TEST(a.report_admin_comment);
	const char *bad[] = {"bogus=1", "socket=relative", "mpi_hooks=sometimes", "default=2", "noequals",
			     "on_daemon_down=maybe", "report_admin_comment=1"};
	auto b = parse_plugstack_args(7, const_cast<char **>(bad), "/usr/lib/libgpuoversub.so");
	BOOST_TEST(b.errors.size() == 7u);
	BOOST_TEST(b.errors[0].find("'bogus'") != std::string::npos);
	// The option's default moved to the policy: the old argument says where.
	BOOST_TEST(b.errors[3].find("'default=2' is ignored: the option's default is now the policy's default_oversub") != std::string::npos);
	BOOST_TEST(b.agent == "/usr/lib/libgpuoversub.so");
}

BOOST_AUTO_TEST_CASE(gpu_lists_and_preload)
{
	BOOST_TEST((*parse_gpu_list("0,2-3") == std::vector<std::uint32_t>{0, 2, 3}));
	BOOST_TEST((*parse_gpu_list("1") == std::vector<std::uint32_t>{1}));
	for (const char *bad : {"", "GPU-0a1b", "3-1", "1,,2", "0-1000", "a"}) {
		BOOST_TEST_CONTEXT(bad) { BOOST_TEST(!parse_gpu_list(bad).has_value()); }
	}
	BOOST_TEST(preload_with("", {"/a.so"}) == "/a.so");
	BOOST_TEST(preload_with("/x.so:/a.so /y.so", {"/a.so", "/m.so"}) == "/a.so /m.so /x.so /y.so");
}

// Issue 48: MIG instances by the UUIDs Slurm writes in CUDA_VISIBLE_DEVICES,
// mapped to the daemon's node indexes whatever Slurm's own order.
BOOST_AUTO_TEST_CASE(mig_instances_by_uuid)
{
	using gos::status::GpuStatus;
	std::vector<GpuStatus> gpus(3);
	gpus[0].gpu = 0, gpus[0].uuid = "GPU-aaaa0000-1111";
	gpus[1].gpu = 1, gpus[1].uuid = "MIG-bbbb0007", gpus[1].mig_parent = "GPU-cccc0000-2222", gpus[1].gpu_instance = 7;
	gpus[2].gpu = 2, gpus[2].uuid = "MIG-bbbb0009", gpus[2].mig_parent = "GPU-cccc0000-2222", gpus[2].gpu_instance = 9;
	gpus[2].mig_devices = {"MIG-bbbb0009", "MIG-bbbb0109"};	// two compute instances of GPU instance 9

	// Slurm on a MIG node names whole GPUs by UUID too.
	for (const char *named : {"MIG-bbbb0009", "GPU-aaaa0000-1111,MIG-bbbb0007", "GPU-aaaa0000-1111"}) {
		BOOST_TEST_CONTEXT(named) { BOOST_TEST(names_by_uuid(named)); }
	}
	for (const char *numbers : {"", "0,1", "3,GPU-MIG-x"}) {
		BOOST_TEST_CONTEXT(numbers) { BOOST_TEST(!names_by_uuid(numbers)); }
	}
	BOOST_TEST((*gpus_by_uuid("MIG-bbbb0009,MIG-bbbb0007", gpus) == std::vector<std::uint32_t>{2, 1}));
	// A second compute instance names its GPU instance, whose memory it shares.
	BOOST_TEST((*gpus_by_uuid("MIG-bbbb0109", gpus) == std::vector<std::uint32_t>{2}));
	// A whole GPU beside them, by a unique prefix as CUDA allows.
	BOOST_TEST((*gpus_by_uuid("MIG-bbbb0007,GPU-aaaa", gpus) == std::vector<std::uint32_t>{1, 0}));
	// The form before R470: the parent, the GPU instance, the compute instance.
	BOOST_TEST((*gpus_by_uuid("MIG-GPU-cccc0000-2222/9/0", gpus) == std::vector<std::uint32_t>{2}));
	// One the daemon lacks, a prefix of a MIG name, an ambiguous or malformed one: nothing.
	for (const char *bad : {"MIG-bbbb0008", "MIG-bbbb000", "MIG-bbbb0007,MIG-dddd", "MIG-GPU-cccc0000-2222/8/0",
				"MIG-GPU-cccc0000-2222", "MIG-GPU-cccc0000-2222/x", "GPU-", "MIG-bbbb0007,", ""}) {
		BOOST_TEST_CONTEXT(bad) { BOOST_TEST(!gpus_by_uuid(bad, gpus).has_value()); }
	}
	// A GPU the daemon names by no UUID (simulated) is never an empty entry's.
	gpus[0].uuid.clear();
	BOOST_TEST(!gpus_by_uuid("MIG-bbbb0007,", gpus).has_value());
	std::vector<GpuStatus> two_alike(2);
	two_alike[0].uuid = "GPU-ab01", two_alike[1].gpu = 1, two_alike[1].uuid = "GPU-ab02";
	BOOST_TEST(!gpus_by_uuid("GPU-ab", two_alike).has_value());
}
