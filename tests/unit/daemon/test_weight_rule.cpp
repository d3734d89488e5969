// The combination rule: shards, Slurm's priorities and the policy file's
// weight maps into one weight per GPU, with garbled and missing facts.
#define BOOST_TEST_MODULE weight_rule
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "common/config/config.hpp"
#include "daemon/gpud/weight_rule.hpp"
#include "tests/unit/common/config_error.hpp"

using namespace gos;
using gpud::weigh;

namespace {

config::Policy policy(const std::string &yaml = "")
{
	return config::parse_config(yaml, "p.yaml").policy;
}

gpud::WeightInputs job(std::uint32_t held, std::uint32_t total)
{
	gpud::WeightInputs in;
	in.partition = "gpu";
	in.qos = "normal";
	in.account = "physics";
	in.shards = {held, total, ""};
	return in;
}

const report::WeightFactor &step(const report::GpuWeight &w, const std::string &fact)
{
	for (const auto &s : w.derivation)
		if (s.fact == fact)
			return s;
	BOOST_FAIL("no step " + fact);
	return w.derivation.front();
}

} // namespace

BOOST_AUTO_TEST_CASE(by_default_a_job_weighs_the_shards_it_holds)
{
	auto three = weigh(policy(), job(3, 4)), one = weigh(policy(), job(1, 4)), whole = weigh(policy(), job(4, 4));
	BOOST_TEST(three.nominal == 0.75);
	BOOST_TEST(one.nominal == 0.25);
	BOOST_TEST(whole.nominal == 1.0);
	BOOST_TEST(step(three, "shards").why == "3 of 4 shards");
	BOOST_TEST(step(whole, "shards").why == "4 of 4 shards (the whole GPU)");
	BOOST_TEST(step(three, "qos").why == "normal: Slurm's QOS Priority unknown");	// counted, never read
	BOOST_TEST(step(weigh(policy("slurm_weights: {qos_priority: off}"), job(3, 4)), "qos").why ==
		   "normal: no weights.qos entry; Slurm's QOS Priority not counted");
	BOOST_TEST(three.derivation.size() == 4u);	// shards, partition, qos, account: each said
}

BOOST_AUTO_TEST_CASE(missing_or_garbled_shards_weigh_1_with_the_reason)
{
	auto in = job(0, 0);
	in.shards.reason = "SLURM_SHARDS_ON_NODE='3x' is not a number";
	auto w = weigh(policy(), in);
	BOOST_TEST(w.nominal == 1.0);
	BOOST_TEST(step(w, "shards").why == "unknown: SLURM_SHARDS_ON_NODE='3x' is not a number");
	BOOST_TEST(weigh(policy(), job(5, 4)).nominal == 1.0);
	BOOST_TEST(step(weigh(policy(), job(5, 4)), "shards").why == "garbled: 5 of 4 shards");
	BOOST_TEST(weigh(policy(), job(0, 4)).nominal == 1.0);
	BOOST_TEST(step(weigh(policy(), job(0, 0)), "shards").why ==
		   "the GPU has no shards configured; the job holds it whole");
	BOOST_TEST(weigh(policy("slurm_weights: {shards: false}"), job(1, 4)).nominal == 1.0);
}

BOOST_AUTO_TEST_CASE(slurm_priorities_count_only_when_the_policy_says_so)
{
	auto in = job(2, 4);
	in.priorities.partition_factor = 3;
	in.priorities.qos_priority = 10;
	in.priorities.fairshare = 0.5;
	BOOST_TEST(weigh(policy("slurm_weights: {partition_factor: off, qos_priority: off}"), in).nominal == 0.5);
	auto all = policy("slurm_weights: {partition_factor: true, qos_priority: true, fairshare: on}");
	auto w = weigh(all, in);
	BOOST_TEST(w.nominal == 0.5 * 3 * 10 * 0.5);
	BOOST_TEST(step(w, "qos").why == "normal: Slurm's QOS Priority 10");
	// Slurm's default QOS Priority is 0: it counts as 1, not as starvation.
	in.priorities.qos_priority = 0;
	BOOST_TEST(weigh(all, in).nominal == 0.5 * 3 * 1 * 0.5);
	in.priorities.fairshare = 0;
	BOOST_TEST(weigh(all, in).nominal == 0.5 * 3 * 1 * 0.01);
}

BOOST_AUTO_TEST_CASE(unknown_or_garbled_priorities_weigh_1_and_say_why)
{
	auto all = policy("slurm_weights: {partition_factor: true, qos_priority: true, fairshare: true}");
	auto in = job(4, 4);
	in.qos = "";
	in.priorities.partition_reason = "slurmctld: Unable to contact slurm controller";
	in.priorities.qos_reason = "slurmdbd: Connection refused";
	auto w = weigh(all, in);
	BOOST_TEST(w.nominal == 1.0);
	// Each fact says its own reason only.
	BOOST_TEST(step(w, "partition").why == "gpu: Slurm's PriorityJobFactor unknown: slurmctld: Unable to contact slurm controller");
	BOOST_TEST(step(w, "qos").why == "(none): Slurm's QOS Priority unknown: slurmdbd: Connection refused");
	// A value kept from the last reading counts, and says it is stale.
	in.priorities.partition_factor = 4;
	in.priorities.partition_reason = "the last value read; slurmctld: Unable to contact slurm controller";
	BOOST_TEST(step(weigh(all, in), "partition").why ==
		   "gpu: Slurm's PriorityJobFactor 4 (the last value read; slurmctld: Unable to contact slurm controller)");
	in.priorities = {};
	in.priorities.fairshare = -0.5;
	w = weigh(all, in);
	BOOST_TEST(w.nominal == 1.0);
	BOOST_TEST(step(w, "account").why == "physics: Slurm's fair-share factor unknown: garbled: -0.5 is not within 0..1");
	in.priorities.fairshare = std::nan("");
	BOOST_TEST(weigh(all, in).nominal == 1.0);
}

BOOST_AUTO_TEST_CASE(a_yaml_entry_wins_over_the_slurm_fact_of_its_kind_only)
{
	auto p = policy("slurm_weights: {partition_factor: true, qos_priority: true}\nweights: {qos: {normal: 2}}\n");
	auto in = job(2, 4);
	in.priorities.partition_factor = 3;
	in.priorities.qos_priority = 100;
	auto w = weigh(p, in);
	BOOST_TEST(w.nominal == 0.5 * 3 * 2);
	BOOST_TEST(step(w, "qos").why == "weights.qos.normal in the policy file (wins over Slurm's QOS Priority)");
	BOOST_TEST(step(w, "partition").factor == 3.0);
}

BOOST_AUTO_TEST_CASE(equal_fairness_ignores_every_fact_and_the_balloon_still_deflates)
{
	auto in = job(1, 4);
	in.deflated = true;
	auto w = weigh(policy("fairness: equal\nballoon: {idle_weight: 0.5}\n"), in);
	BOOST_TEST(w.nominal == 1.0);
	BOOST_TEST(w.effective == 0.5);
	BOOST_TEST(w.derivation.back().fact == "balloon");
	auto plain = weigh(policy(), in);
	BOOST_TEST(plain.nominal == 0.25);
	BOOST_TEST(plain.effective == 0.25 * 0.25);
}

BOOST_AUTO_TEST_CASE(the_slurm_weights_keys_are_checked)
{
	auto error = gos_test::config_error;
	BOOST_TEST(error("slurm_weights: {qos: true}") ==
		   "p.yaml:1:22: unknown key 'qos' in 'slurm_weights'; use shards, partition_factor, qos_priority, fairshare or refresh");
	BOOST_TEST(error("slurm_weights: {shards: maybe}") == "p.yaml:1:25: 'slurm_weights.shards' must be true or false, not 'maybe'");
	BOOST_TEST(policy().slurm_weights.shards);
	// With nothing written, Slurm's partition and QOS priorities count.
	BOOST_TEST(policy().slurm_weights.partition_factor);
	BOOST_TEST(policy().slurm_weights.qos_priority);
	BOOST_TEST(!policy().slurm_weights.fairshare);
}
