#include "common/config/config.hpp"

#include <arpa/inet.h>
#include <yaml.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <functional>
#include <memory>
#include <set>
#include <sstream>
#include <utility>

#include "common/config/shape.hpp"
#include "common/util/regular_file.hpp"
#include "common/util/units.hpp"

namespace gos::config {
namespace {

// A parsed libyaml document, freed on scope exit.
struct Document {
	yaml_document_t doc{};
	bool loaded = false;
	~Document()
	{
		if (loaded)
			yaml_document_delete(&doc);
	}
};

class Loader {
public:
	Loader(yaml_document_t *doc, std::string name) : doc_(doc), name_(std::move(name)) {}
	void load(Config &cfg);

private:
	using Node = yaml_node_t;
	[[noreturn]] void fail(const Node *n, const std::string &why) const
	{
		throw ConfigError(name_ + ":" + std::to_string(n->start_mark.line + 1) + ":" +
				  std::to_string(n->start_mark.column + 1) + ": " + why);
	}
	Node *node(int id) const { return yaml_document_get_node(doc_, id); }
	std::string scalar(const Node *n, const std::string &key) const
	{
		if (n->type != YAML_SCALAR_NODE)
			fail(n, "'" + key + "' must be a single value");
		return std::string(reinterpret_cast<const char *>(n->data.scalar.value), n->data.scalar.length);
	}
	// Calls fn(key, value) for each pair of a mapping; rejects repeats.
	void each(const Node *map, const std::string &where,
		  const std::function<void(const std::string &, Node *)> &fn) const;
	std::uint64_t size(const Node *n, const std::string &key, std::uint64_t min) const;
	std::uint64_t duration(const Node *n, const std::string &key, bool zero_ok) const;
	double number(const Node *n, const std::string &key, double lo, double hi) const;
	std::uint64_t whole(const Node *n, const std::string &key, double lo, double hi) const
	{
		double v = number(n, key, lo, hi);
		if (std::floor(v) != v)
			fail(n, "'" + key + "' must be a whole number");
		return static_cast<std::uint64_t>(v);
	}
	bool boolean(const Node *n, const std::string &key) const;
	std::string path(const Node *n, const std::string &key, bool empty_ok) const;
	template <class E>
	E choice(const Node *n, const std::string &key, const std::map<std::string, E> &options) const;
	void table(const Node *n, const std::string &key, PerTenantTable &out, double lo, double hi) const;
	template <class T>
	void keyed(const Node *n, const std::string &key, Keyed<T> &out,
		   const std::function<T(const Node *, const std::string &)> &one) const;
	Request request(const Node *n, const std::string &key) const;
	void gpus(const Node *n, Config &cfg) const;
	std::string gpu_uuid(const Node *v) const;
	void slurm_weights(const Node *n, SlurmWeights &out) const;
	void jobwide(const Node *n, Config &cfg) const;

	yaml_document_t *doc_;
	std::string name_;
};

void Loader::each(const Node *map, const std::string &where,
		  const std::function<void(const std::string &, Node *)> &fn) const
{
	if (map->type != YAML_MAPPING_NODE)
		fail(map, where.empty() ? "the policy must be a mapping of keys to values" : "'" + where + "' must be a mapping");
	std::set<std::string> seen;
	for (auto *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		Node *k = node(p->key), *v = node(p->value);
		std::string key = scalar(k, where.empty() ? "key" : where);
		if (!seen.insert(key).second)
			fail(k, "'" + key + "' is given twice");
		fn(key, v);
	}
}

std::uint64_t Loader::size(const Node *n, const std::string &key, std::uint64_t min) const
{
	std::string s = scalar(n, key);
	auto v = parse_size(s);
	if (!v || *v < min || *v >= (1ULL << 48))
		fail(n, "'" + key + "' must be a byte size such as 2M or 80G" +
				(min ? " of at least " + format_bytes(min) : std::string()) + ", not '" + s + "'");
	return *v;
}

std::uint64_t Loader::duration(const Node *n, const std::string &key, bool zero_ok) const
{
	std::string s = scalar(n, key);
	double value = 0;
	auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
	std::string unit(p, static_cast<const char *>(s.data() + s.size()));
	static const std::map<std::string, double> scale = {{"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}, {"d", 86400e9}};
	auto u = scale.find(unit);
	if (ec != std::errc() || u == scale.end() || value < 0 || (!zero_ok && value == 0) || value * u->second > 1e18)
		fail(n, "'" + key + "' must be a duration such as 500ms, 10s or 5m" +
				(zero_ok ? "" : " above zero") + ", not '" + s + "'");
	return static_cast<std::uint64_t>(std::llround(value * u->second));
}

double Loader::number(const Node *n, const std::string &key, double lo, double hi) const
{
	std::string s = scalar(n, key);
	double v = 0;
	auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
	if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v) || v < lo || v > hi) {
		std::ostringstream range;
		range << lo << " to " << hi;
		fail(n, "'" + key + "' must be a number from " + range.str() + ", not '" + s + "'");
	}
	return v;
}

bool Loader::boolean(const Node *n, const std::string &key) const
{
	std::string s = scalar(n, key);
	if (s == "true" || s == "yes" || s == "on")
		return true;
	if (s == "false" || s == "no" || s == "off")
		return false;
	fail(n, "'" + key + "' must be true or false, not '" + s + "'");
}

std::string Loader::path(const Node *n, const std::string &key, bool empty_ok) const
{
	std::string s = scalar(n, key);
	if (s.empty() && empty_ok)
		return s;
	if (s.empty() || s[0] != '/')
		fail(n, "'" + key + "' must be an absolute path, not '" + s + "'");
	if (s.find('\n') != std::string::npos || s.size() > 1024)
		fail(n, "'" + key + "' is not a usable path");
	return s;
}

template <class E>
E Loader::choice(const Node *n, const std::string &key, const std::map<std::string, E> &options) const
{
	std::string s = scalar(n, key);
	auto it = options.find(s);
	if (it == options.end()) {
		std::string list;
		for (auto &[name, v] : options)
			list += (list.empty() ? "" : ", ") + name;
		fail(n, "'" + key + "' must be one of " + list + ", not '" + s + "'");
	}
	return it->second;
}

void Loader::table(const Node *n, const std::string &key, PerTenantTable &out, double lo, double hi) const
{
	each(n, key, [&](const std::string &kind, Node *v) {
		std::map<std::string, double> *into = kind == "partition" ? &out.partition
						      : kind == "account" ? &out.account
						      : kind == "qos"	  ? &out.qos
									  : nullptr;
		if (!into)
			fail(v, "unknown key '" + kind + "' in '" + key + "'; use partition, account or qos");
		each(v, key + "." + kind, [&](const std::string &name, Node *w) {
			(*into)[name] = number(w, key + "." + kind + "." + name, lo, hi);
		});
	});
}

// A plain value, or one per partition and QOS with a default.
template <class T>
void Loader::keyed(const Node *n, const std::string &key, Keyed<T> &out,
		   const std::function<T(const Node *, const std::string &)> &one) const
{
	if (n->type == YAML_SCALAR_NODE) {
		out.plain = one(n, key);
		return;
	}
	each(n, key, [&](const std::string &kind, Node *v) {
		if (kind == "default")
			out.plain = one(v, key + ".default");
		else if (kind == "partition" || kind == "qos")
			each(v, key + "." + kind, [&](const std::string &name, Node *w) {
				(kind == "partition" ? out.partition : out.qos)[name] = one(w, key + "." + kind + "." + name);
			});
		else
			fail(v, "unknown key '" + kind + "' in '" + key + "'; use default, partition or qos");
	});
}

Request Loader::request(const Node *n, const std::string &key) const
{
	std::string s = scalar(n, key), why;
	auto r = parse_request(s, why);
	if (!r || s.empty())
		fail(n, "'" + key + "' must be " + accepted_values + ", not '" + s + "'");
	return *r;
}

// A GPU's name as NVML and CUDA_VISIBLE_DEVICES write it: GPU-… or MIG-…
// and a UUID's hex digits and dashes.
std::string Loader::gpu_uuid(const Node *v) const
{
	std::string id = scalar(v, "uuid");
	bool named = (id.rfind("GPU-", 0) == 0 || id.rfind("MIG-", 0) == 0) && id.size() > 4 && id.size() < 96;
	if (!named || id.find_first_not_of("0123456789abcdefABCDEF-", 4) != std::string::npos)
		fail(v, "'uuid' must be a GPU's UUID as NVML names it: GPU- or MIG- and hex digits and dashes");
	return id;
}

void Loader::gpus(const Node *n, Config &cfg) const
{
	if (n->type != YAML_SEQUENCE_NODE)
		fail(n, std::string("'") + start_key::simulated_gpus + "' must be a list");
	for (auto *i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++) {
		SimulatedGpu g;
		Node *item = node(*i);
		each(item, start_key::simulated_gpus, [&](const std::string &key, Node *v) {
			if (key == "memory")
				g.memory = size(v, "memory", 64ULL << 20);
			else if (key == "numa_node")
				g.numa_node = static_cast<int>(number(v, "numa_node", -1, 1023));
			else if (key == "pci_bus_id")
				g.pci_bus_id = scalar(v, "pci_bus_id");
			else if (key == "nvml")
				g.nvml = boolean(v, "nvml");
			else if (key == "uuid")
				g.uuid = gpu_uuid(v);
			else
				fail(v, "unknown key '" + key +
						"' in a simulated GPU; use memory, numa_node, pci_bus_id, uuid or nvml");
		});
		if (!g.memory)
			fail(item, "a simulated GPU needs 'memory'");
		if (g.numa_node != -1 && std::floor(g.numa_node) != g.numa_node)
			fail(item, "'numa_node' must be a whole number");
		cfg.start.simulated_gpus.push_back(g);
	}
	if (cfg.start.simulated_gpus.size() > 64)
		fail(n, "at most 64 simulated GPUs");
}

void Loader::slurm_weights(const Node *n, SlurmWeights &out) const
{
	each(n, "slurm_weights", [&](const std::string &k, Node *v) {
		if (k == "shards")
			out.shards = boolean(v, "slurm_weights.shards");
		else if (k == "partition_factor")
			out.partition_factor = boolean(v, "slurm_weights.partition_factor");
		else if (k == "qos_priority")
			out.qos_priority = boolean(v, "slurm_weights.qos_priority");
		else if (k == "fairshare")
			out.fairshare = boolean(v, "slurm_weights.fairshare");
		else if (k == "refresh") {
			out.refresh_ns = duration(v, "slurm_weights.refresh", false);
			if (out.refresh_ns < 100'000'000)
				fail(v, "'slurm_weights.refresh' must be at least 100ms");
		} else
			fail(v, "unknown key '" + k + "' in 'slurm_weights'; use shards, partition_factor, qos_priority, fairshare or refresh");
	});
}

// The job-wide channel (docs/jobwide.md): where its door listens and
// munged's socket are fixed at start; the rest is policy.
void Loader::jobwide(const Node *n, Config &cfg) const
{
	Jobwide &out = cfg.policy.jobwide;
	const Node *wait = nullptr, *send_for = nullptr;
	each(n, "jobwide", [&](const std::string &k, Node *v) {
		std::string key = "jobwide." + k;
		if (key == start_key::jobwide_port)
			cfg.start.jobwide_port = static_cast<std::uint16_t>(whole(v, key, 1, 65535));
		else if (key == start_key::jobwide_listen) {
			// A numeric address only: a host name would be looked up
			// once, at start, and could name another node later.
			std::string s = scalar(v, key);
			unsigned char addr[sizeof(struct in6_addr)];
			if (!s.empty() && inet_pton(AF_INET, s.c_str(), addr) != 1 &&
			    inet_pton(AF_INET6, s.c_str(), addr) != 1)
				fail(v, "'" + key + "' must be a numeric IPv4 or IPv6 address, or empty for all, not '" + s + "'");
			cfg.start.jobwide_listen = s;
		} else if (key == start_key::jobwide_munge_socket)
			cfg.start.jobwide_munge_socket = path(v, key, false);
		else if (key == start_key::jobwide_reserved_ports)
			cfg.start.jobwide_reserved_ports = boolean(v, key);
		else if (k == "wait") {
			out.wait_ns = duration(v, key, false);
			wait = v;
		} else if (k == "failover_after")
			out.failover_after_ns = duration(v, key, false);
		else if (k == "send_for") {
			out.send_for_ns = duration(v, key, false);
			send_for = v;
		} else if (k == "keep")
			out.keep_ns = duration(v, key, true);
		else if (k == "max_nodes")
			out.max_nodes = whole(v, key, 1, 65536);
		else if (k == "record_helper")
			out.record_helper = choice<RecordHelper>(
				v, key, {{"socket", RecordHelper::socket}, {"direct", RecordHelper::direct}, {"none", RecordHelper::none}});
		else
			fail(v, "unknown key '" + k + "' in 'jobwide'; use port, listen, munge_socket, reserved_ports, wait, "
				"failover_after, send_for, keep, max_nodes or record_helper");
	});
	if (out.send_for_ns < out.wait_ns)
		fail(send_for ? send_for : wait ? wait : n,
		     "'jobwide.send_for' must not be shorter than 'jobwide.wait': a sender would give up "
		     "while the writer still waits for its part");
}

void Loader::load(Config &cfg)
{
	Node *root = yaml_document_get_root_node(doc_);
	if (!root)
		return;		// an empty file: all defaults
	each(root, "", [&](const std::string &key, Node *v) {
		if (key == start_key::socket)
			cfg.start.socket = path(v, key, false);
		else if (key == start_key::state_dir)
			cfg.start.state_dir = path(v, key, false);
		else if (key == start_key::engine)
			cfg.start.engine = choice<EngineMode>(v, key, {{"auto", EngineMode::auto_}, {"kernel", EngineMode::kernel},
								 {"userspace", EngineMode::userspace}});
		else if (key == start_key::fairness) {
			// equal is the weighted family without the weights: a reload may
			// switch between the two, not to or from fcfs or static.
			auto [family, equal] = choice<std::pair<Fairness, bool>>(
				v, key, {{"weighted", {Fairness::weighted, false}}, {"equal", {Fairness::weighted, true}},
					 {"fcfs", {Fairness::fcfs, false}}, {"static", {Fairness::static_, false}}});
			cfg.start.fairness = family;
			cfg.policy.equal_weights = equal;
		}
		else if (key == "weights")
			table(v, key, cfg.policy.weights, 0.01, 1000);
		else if (key == "min_share")
			table(v, key, cfg.policy.min_share, 0, 1);
		else if (key == "max_oversub")
			keyed<double>(v, key, cfg.policy.max_oversub,
				      [&](const Node *w, const std::string &k) { return number(w, k, 1, 64); });
		else if (key == "default_oversub")
			keyed<Request>(v, key, cfg.policy.default_oversub,
				       [&](const Node *w, const std::string &k) { return request(w, k); });
		else if (key == "over_ceiling")
			cfg.policy.over_ceiling = choice<Ceiling>(v, key, {{"clamp", Ceiling::clamp}, {"refuse", Ceiling::refuse}});
		else if (key == start_key::chunk_size) {
			cfg.start.chunk_size = size(v, key, 64 << 10);
			if (cfg.start.chunk_size > (1ULL << 30) || cfg.start.chunk_size % 4096)
				fail(v, "'" + key + "' must be at most 1G and a multiple of 4K");
		} else if (key == start_key::random_chunks)
			cfg.start.random_chunks = choice<bool>(v, key, {{"priority", false}, {"random", true}});
		else if (key == "return_interval")
			cfg.policy.return_interval_ns = duration(v, key, false);
		else if (key == start_key::return_batch)
			cfg.start.return_batch = size(v, key, 0);
		else if (key == start_key::order_timeout_ns)
			cfg.start.order_timeout_ns = duration(v, key, false);
		else if (key == "advice")
			each(v, key, [&](const std::string &k, Node *w) {
				if (key + "." + k != start_key::advice_persist_ns)
					fail(w, "unknown key '" + k + "' in 'advice'; use persist");
				cfg.start.advice_persist_ns = duration(w, start_key::advice_persist_ns, true);
			});
		else if (key == "lending")
			each(v, key, [&](const std::string &k, Node *w) {
				if (key + "." + k == start_key::lend_backoff_ns)
					cfg.start.lend_backoff_ns = duration(w, start_key::lend_backoff_ns, true);
				else if (key + "." + k == start_key::lend_backoff_max_ns)
					cfg.start.lend_backoff_max_ns = duration(w, start_key::lend_backoff_max_ns, true);
				else
					fail(w, "unknown key '" + k + "' in 'lending'; use backoff or backoff_max");
			});
		else if (key == "balloon")
			each(v, key, [&](const std::string &k, Node *w) {
				if (k == "enabled")
					cfg.policy.balloon = boolean(w, "balloon.enabled");
				else if (k == "period")
					cfg.policy.balloon_period_ns = duration(w, "balloon.period", false);
				else if (k == "low")
					cfg.policy.balloon_low = number(w, "balloon.low", 0, 1);
				else if (k == "high")
					cfg.policy.balloon_high = number(w, "balloon.high", 0, 1);
				else if (k == "idle_weight")
					cfg.policy.balloon_idle_weight = number(w, "balloon.idle_weight", 0.01, 1);
				else
					fail(w, "unknown key '" + k + "' in 'balloon'; use enabled, period, low, high or idle_weight");
			});
		else if (key == "host_spill_limit")
			cfg.policy.host_spill_limit = size(v, key, 0);
		else if (key == start_key::reserve)
			cfg.start.reserve = size(v, key, 0);
		else if (key == "reports")
			each(v, key, [&](const std::string &k, Node *w) {
				if (k == "dir")
					cfg.policy.report_dir = path(w, "reports.dir", false);
				else if (k == "summary")
					cfg.policy.report_summary = boolean(w, "reports.summary");
				else if (k == "admin_comment")
					cfg.policy.report_admin_comment = boolean(w, "reports.admin_comment");
				else if (k == "keep")
					cfg.policy.report_keep_ns = duration(w, "reports.keep", true);
				else if (k == "max_size")
					cfg.policy.report_max_bytes = size(w, "reports.max_size", 0);
				else
					fail(w, "unknown key '" + k + "' in 'reports'; use dir, summary, admin_comment, keep or max_size");
			});
		else if (key == "exporter")
			each(v, key, [&](const std::string &k, Node *w) {
				if (k == "textfile")
					cfg.policy.exporter_textfile = path(w, "exporter.textfile", true);
				else if (k == "period")
					cfg.policy.exporter_period_ns = duration(w, "exporter.period", false);
				else
					fail(w, "unknown key '" + k + "' in 'exporter'; use textfile or period");
			});
		else if (key == "max_connections_per_uid")
			cfg.policy.max_connections_per_uid = whole(v, key, 1, 65536);
		else if (key == "reconcile")
			each(v, key, [&](const std::string &k, Node *w) {
				if (k == "period")
					cfg.policy.reconcile_period_ns = duration(w, "reconcile.period", false);
				else if (k == "grace")
					cfg.policy.stale_grace_ns = duration(w, "reconcile.grace", true);
				else
					fail(w, "unknown key '" + k + "' in 'reconcile'; use period or grace");
			});
		else if (key == start_key::simulated_gpus)
			gpus(v, cfg);
		else if (key == "slurm_cgroup")
			cfg.policy.slurm_cgroup = path(v, key, false);
		else if (key == "max_buffers_per_job")
			cfg.policy.max_buffers_per_job = whole(v, key, 1, 1 << 24);
		else if (key == "max_ranks_per_job")
			cfg.policy.max_ranks_per_job = whole(v, key, 1, 1 << 16);
		else if (key == "max_agents_per_job")
			cfg.policy.max_agents_per_job = whole(v, key, 1, 1 << 16);
		else if (key == "slurm_weights")
			slurm_weights(v, cfg.policy.slurm_weights);
		else if (key == "jobwide")
			jobwide(v, cfg);
		else if (key == "unresponsive_after")
			cfg.policy.unresponsive_after = whole(v, key, 1, 100000);
		else if (key == "on_unresponsive")
			cfg.policy.on_unresponsive = choice<Unresponsive>(
				v, key, {{"refuse", Unresponsive::refuse}, {"kill", Unresponsive::kill}});
		else
			fail(v, "unknown key '" + key + "'");
	});
	if (cfg.policy.balloon_low > cfg.policy.balloon_high)
		fail(root, "'balloon.low' must not exceed 'balloon.high'");
	if (cfg.start.lend_backoff_max_ns < cfg.start.lend_backoff_ns)
		fail(root, std::string("'") + start_key::lend_backoff_max_ns + "' must not be shorter than '" +
				   start_key::lend_backoff_ns + "'");
	// Both hold job-N.json: a record removed at a job's end would take its
	// report with it, and a report would overwrite a running job's record.
	auto dir = [](const std::string &p) { return (std::filesystem::path(p) / "").lexically_normal(); };
	if (dir(cfg.start.state_dir) == dir(cfg.policy.report_dir))
		fail(root, "'state_dir' and 'reports.dir' are the same directory (" + cfg.start.state_dir +
				   "); job records and reports would overwrite and delete each other: give each its own");
}

} // namespace

Config parse_config(const std::string &text, const std::string &name)
{
	check_shape(text, name);
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser))
		throw ConfigError(name + ": cannot start the YAML parser");
	std::unique_ptr<yaml_parser_t, void (*)(yaml_parser_t *)> guard(&parser, yaml_parser_delete);
	yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char *>(text.data()), text.size());
	Document d;
	if (!yaml_parser_load(&parser, &d.doc))
		throw ConfigError(name + ":" + std::to_string(parser.problem_mark.line + 1) + ":" +
				  std::to_string(parser.problem_mark.column + 1) + ": not valid YAML: " +
				  (parser.problem ? parser.problem : "unknown problem"));
	d.loaded = true;
	Config cfg;
	Loader(&d.doc, name).load(cfg);
	return cfg;
}

Config load_config(const std::string &path)
{
	std::string text;
	try {
		text = read_regular_file(path, {max_file_bytes});
	} catch (const FileRefused &e) {
		throw ConfigError(std::string(e.what()) + " (the policy file)");
	}
	return parse_config(text, path);
}

} // namespace gos::config
