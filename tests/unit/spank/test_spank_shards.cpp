// The shards a step holds, from SLURM_SHARDS_ON_NODE and gres.conf, with
// garbled and missing values.
#define BOOST_TEST_MODULE spank_shards
#include <boost/test/unit_test.hpp>

#include <sstream>

#include "spank/shards.hpp"

using namespace gos::spank;

namespace {

NodeShards read(const std::string &conf, const std::string &node = "node1")
{
	std::istringstream in(conf);
	return node_shards(in, node);
}

} // namespace

BOOST_AUTO_TEST_CASE(gres_conf_gives_each_gpu_its_shards)
{
	BOOST_TEST(read("NodeName=node1 Name=gpu File=/dev/nvidia0\nNodeName=node1 Name=shard Count=4 File=/dev/nvidia0\n").per_gpu == 4u);
	// Eight shards over two GPUs, lines for other nodes and comments ignored.
	BOOST_TEST(read("# the GPU nodes\nNodeName=gpu[01-04] Name=gpu File=/dev/nvidia[0-1]\n"
			"NodeName=gpu[01-04] name=shard count=8\nNodeName=other Name=shard Count=100\n", "gpu03")
			   .per_gpu == 4u);
	BOOST_TEST(read("Name=gpu File=/dev/nvidia0\n").per_gpu == 0u);	// no shards configured
	BOOST_TEST(read("Name=gpu File=/dev/nvidia0\n").reason.empty());
	BOOST_TEST(read("Name=shard Count=lots\n").reason == "gres.conf: Count=lots is not a number");
	BOOST_TEST(read("Name=shard Count=4\n").reason == "gres.conf names shards but no GPU devices for node node1");
}

BOOST_AUTO_TEST_CASE(hostlists)
{
	BOOST_TEST(hostlist_has("node1", "node1"));
	BOOST_TEST(hostlist_has("a,gpu[01-04,7],b", "gpu7"));
	BOOST_TEST(hostlist_has("gpu[01-04]", "gpu02"));
	BOOST_TEST(!hostlist_has("gpu[01-04]", "gpu2"));
	BOOST_TEST(!hostlist_has("gpu[x-4]", "gpu2"));
	auto names = hostlist_names("n[1-2],gpu[09-10]");
	BOOST_TEST((names == std::vector<std::string>{"n1", "n2", "gpu09", "gpu10"}));
}

BOOST_AUTO_TEST_CASE(a_step_holds_its_shards_or_whole_gpus)
{
	NodeShards four{4, ""};
	auto s = step_shards("3", 1, four);
	BOOST_TEST(s.held == 3u);
	BOOST_TEST(s.total == 4u);
	s = step_shards("", 2, four);	// --gres=gpu:2
	BOOST_TEST(s.held == 4u);
	BOOST_TEST(s.total == 4u);
	BOOST_TEST(step_shards("", 1, NodeShards{}).total == 0u);	// no shards anywhere: whole GPU
	BOOST_TEST(step_shards("3x", 1, four).reason == "SLURM_SHARDS_ON_NODE='3x' is not a shard count");
	BOOST_TEST(step_shards("0", 1, four).reason == "SLURM_SHARDS_ON_NODE='0' is not a shard count");
	BOOST_TEST(step_shards("2", 1, NodeShards{}).reason == "the job holds 2 shards, but gres.conf gives this node none");
	BOOST_TEST(step_shards("2", 1, NodeShards{0, "gres.conf: Count=x is not a number"}).reason ==
		   "gres.conf: Count=x is not a number");
}
