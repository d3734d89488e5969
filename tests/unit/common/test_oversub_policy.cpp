// The policy's values for --gpu-mem-oversub keyed by partition and QOS:
// max_oversub (the ceiling on FACTOR) and default_oversub (a job's value
// when it gives none). The loader, with its messages, the lookup, and the
// daemon's use of them (the clamp and explain's entries).
#define BOOST_TEST_MODULE oversub_policy
#include <boost/test/unit_test.hpp>

#include "common/config/config.hpp"
#include "daemon/gpud/policy.hpp"
#include "tests/unit/common/config_error.hpp"

using namespace gos;
using config::Request;
using gos_test::config_error;

BOOST_AUTO_TEST_CASE(a_plain_value_applies_to_every_job)
{
	auto p = config::parse_config("max_oversub: 2.5\ndefault_oversub: 1.5x\n", "p.yaml").policy;
	auto ceiling = config::choose(p.max_oversub, "max_oversub", "gpu", "high");
	BOOST_TEST(ceiling.value == 2.5);
	BOOST_TEST(ceiling.entry == "max_oversub");
	auto fallback = config::choose(p.default_oversub, "default_oversub", "gpu", "high");
	BOOST_TEST((fallback.value.kind == Request::Kind::factor));
	BOOST_TEST(fallback.value.factor == 1.5);
	// Without the keys: a ceiling of 4, and a job that says nothing is off.
	auto none = config::parse_config("", "p.yaml").policy;
	BOOST_TEST(config::choose(none.max_oversub, "max_oversub", "gpu", "").value == 4.0);
	BOOST_TEST((config::choose(none.default_oversub, "default_oversub", "gpu", "").value.kind == Request::Kind::off));
}

BOOST_AUTO_TEST_CASE(the_qos_entry_wins_over_the_partition_entry_over_the_default)
{
	auto p = config::parse_config("max_oversub: {default: 4, partition: {debug: 1.5, gpu: 2}, qos: {high: 8}}\n"
				      "default_oversub: {partition: {gpu: 2}, qos: {big: 40G, none: 'OFF'}}\n",
				      "p.yaml")
			 .policy;
	auto pick = [&](const char *partition, const char *qos) {
		return config::choose(p.max_oversub, "max_oversub", partition, qos);
	};
	BOOST_TEST(pick("gpu", "high").value == 8.0);
	BOOST_TEST(pick("gpu", "high").entry == "max_oversub.qos.high");
	BOOST_TEST(pick("debug", "normal").value == 1.5);
	BOOST_TEST(pick("debug", "normal").entry == "max_oversub.partition.debug");
	BOOST_TEST(pick("cpu", "normal").value == 4.0);
	BOOST_TEST(pick("cpu", "normal").entry == "max_oversub");
	BOOST_TEST(pick("", "").value == 4.0);	// not known (at submit time)
	auto fallback = [&](const char *partition, const char *qos) {
		return config::choose(p.default_oversub, "default_oversub", partition, qos);
	};
	BOOST_TEST(fallback("gpu", "normal").value.text() == "2");
	BOOST_TEST(fallback("gpu", "normal").entry == "default_oversub.partition.gpu");
	BOOST_TEST(fallback("gpu", "big").value.size == 40ULL << 30);
	BOOST_TEST((fallback("gpu", "none").value.kind == Request::Kind::off));
	BOOST_TEST((fallback("cpu", "normal").value.kind == Request::Kind::off));	// no default given: off
	BOOST_TEST(fallback("cpu", "normal").entry == "default_oversub");
}

BOOST_AUTO_TEST_CASE(every_bad_entry_names_file_line_and_column)
{
	struct { const char *yaml, *expect; } cases[] = {
		{"max_oversub: 100\n", "p.yaml:1:14: 'max_oversub' must be a number from 1 to 64, not '100'"},
		{"max_oversub: {partition: {gpu: 0.5}}\n",
		 "p.yaml:1:32: 'max_oversub.partition.gpu' must be a number from 1 to 64, not '0.5'"},
		{"max_oversub:\n  default: lots\n", "p.yaml:2:12: 'max_oversub.default' must be a number from 1 to 64"},
		{"max_oversub: {account: {phys: 2}}\n",
		 "p.yaml:1:24: unknown key 'account' in 'max_oversub'; use default, partition or qos"},
		{"max_oversub: {qos: [high]}\n", "p.yaml:1:20: 'max_oversub.qos' must be a mapping"},
		{"max_oversub: [2]\n", "p.yaml:1:14: 'max_oversub' must be a mapping"},
		{"max_oversub: {qos: {high: 2, high: 3}}\n", "p.yaml:1:30: 'high' is given twice"},
		{"default_oversub: lots\n", "p.yaml:1:18: 'default_oversub' must be on, off (any case), a FACTOR"},
		{"default_oversub: ''\n", "p.yaml:1:18: 'default_oversub' must be on, off"},
		{"default_oversub:\n  qos:\n    high: -2\n", "p.yaml:3:11: 'default_oversub.qos.high' must be on, off"},
		{"default_oversub: {partition: {gpu: 0G}}\n", "p.yaml:1:36: 'default_oversub.partition.gpu' must be"},
	};
	for (auto &c : cases) {
		std::string got = config_error(c.yaml);
		BOOST_TEST(got.rfind(c.expect, 0) == 0u, "for:\n" << c.yaml << "got: " << got);
	}
}

BOOST_AUTO_TEST_CASE(the_daemon_clamps_to_the_jobs_entry_and_explain_names_it)
{
	auto cfg = config::parse_config("max_oversub: {default: 4, partition: {gpu: 2}, qos: {high: 8}}\n"
					"default_oversub: {qos: {high: 1.5}}\n",
					"p.yaml");
	gpud::Job job;
	job.partition = "gpu";
	job.qos = "normal";
	job.factor_milli = 6000;
	job.gpus.push_back({});
	BOOST_TEST(gpud::policy_for(cfg, job, job.gpus[0], {}).factor == 2.0);
	auto o = nlohmann::json(gpud::oversub_choice(cfg, job));
	BOOST_TEST(o["asked"] == "6");
	BOOST_TEST(o["ceiling"] == 2.0);
	BOOST_TEST(o["ceiling_from"] == "max_oversub.partition.gpu");
	BOOST_TEST(o["default"] == "off");
	BOOST_TEST(o["default_from"] == "default_oversub");
	job.qos = "high";
	BOOST_TEST(gpud::policy_for(cfg, job, job.gpus[0], {}).factor == 6.0);
	o = nlohmann::json(gpud::oversub_choice(cfg, job));
	BOOST_TEST(o["ceiling_from"] == "max_oversub.qos.high");
	BOOST_TEST(o["default"] == "1.5");
	BOOST_TEST(o["default_from"] == "default_oversub.qos.high");
	job.factor_milli = 0;
	job.size_limit = 40ULL << 30;
	BOOST_TEST(nlohmann::json(gpud::oversub_choice(cfg, job))["asked"] == "40 GiB");
	job.size_limit = 0;
	BOOST_TEST(nlohmann::json(gpud::oversub_choice(cfg, job))["asked"] == "on");
}
