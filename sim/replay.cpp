#include "sim/replay.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <unordered_map>

namespace gos::sim {

std::vector<ReplayPolicy> policies(const ReplayOptions &opt)
{
	// The baselines lend again at once, as the systems they stand for do.
	auto make = [&](std::uint32_t fairness, std::uint32_t victim, std::uint32_t select, bool ours) {
		gos_config cfg;
		gos_config_defaults(&cfg);
		cfg.chunk_size = opt.chunk_size;
		cfg.fairness = fairness;
		cfg.victim = victim;
		cfg.select = select;
		cfg.seed = opt.seed;
		cfg.throttle_persist_ns = ours ? static_cast<std::uint64_t>(opt.persist_s * 1e9) : 0;
		cfg.lend_backoff_ns = ours ? opt.lend_backoff_ns : 0;
		cfg.lend_backoff_max_ns = ours ? opt.lend_backoff_max_ns : 0;
		return cfg;
	};
	return {
		{"fcfs", "first come, first served; no moves", make(GOS_FAIR_FCFS, GOS_VICTIM_RESIDENT, GOS_SELECT_RANDOM, false), false},
		{"static", "fixed weighted partitions", make(GOS_FAIR_STATIC, GOS_VICTIM_EXCESS, GOS_SELECT_PRIORITY, false), true},
		{"uvm-lru", "global LRU over all chunks, like UVM", make(GOS_FAIR_WEIGHTED, GOS_VICTIM_LRU, GOS_SELECT_RANDOM, false), false},
		{"gpuswap", "largest tenant gives, random chunk", make(GOS_FAIR_WEIGHTED, GOS_VICTIM_RESIDENT, GOS_SELECT_RANDOM, false), false},
		{"gprioswap", "largest tenant gives, lowest priority", make(GOS_FAIR_WEIGHTED, GOS_VICTIM_RESIDENT, GOS_SELECT_PRIORITY, false), false},
		{"gpuoversub", "weighted shares, priority, throttle, lending backoff", make(GOS_FAIR_WEIGHTED, GOS_VICTIM_EXCESS, GOS_SELECT_PRIORITY, true), true},
	};
}

ReplayPolicy undamped(const ReplayOptions &opt)
{
	ReplayOptions eager = opt;
	eager.lend_backoff_ns = eager.lend_backoff_max_ns = 0;
	ReplayPolicy p = policies(eager).back();
	p.name = "gpuoversub-undamped";
	p.summary = "gpuoversub lending again at once";
	return p;
}

namespace {

struct SimBuffer {
	std::size_t tenant;
	std::uint64_t size;
	double access;
	std::uint64_t host = 0;
};

struct SimTenant {
	bool joined = false;
	std::uint32_t id = 0, client = 0;
	std::uint32_t weight = 1;
	std::map<std::string, std::uint64_t> tags;	// tag -> engine buffer
	double traffic = 0, host_traffic = 0;		// bytes per second
	double ideal_s = 0, actual_s = 0;
	TenantResult past;				// from earlier incarnations
};

void merge(TenantResult &into, const gos_tenant_stats &st)
{
	into.bytes_evicted += st.bytes_evicted;
	into.bytes_returned += st.bytes_returned;
	into.bytes_host_placed += st.bytes_host_placed;
	into.peak_resident = std::max<std::uint64_t>(into.peak_resident, st.peak_resident);
	into.peak_host = std::max<std::uint64_t>(into.peak_host, st.peak_host);
	into.oversub_s += static_cast<double>(st.oversub_ns) / 1e9;
}

double percentile(std::vector<double> v, double p)
{
	if (v.empty())
		return 0;
	std::size_t i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1));
	std::nth_element(v.begin(), v.begin() + static_cast<long>(i), v.end());
	return v[i];
}

class Replayer {
public:
	Replayer(const Trace &trace, const ReplayPolicy &policy, const ReplayOptions &opt);
	Replayer(const Replayer &) = delete;
	Replayer &operator=(const Replayer &) = delete;

	PolicyResult run(const Progress &progress);

private:
	static std::uint64_t clock(void *ctx) { return static_cast<Replayer *>(ctx)->now_ns_; }
	[[noreturn]] void fail(const Event &ev, const std::string &what, int err) const;
	bool quiet();
	void advance_to(double t);
	void integrate(double t);
	void sample();
	void apply(const Event &ev);
	void join(std::size_t t, const Event &ev);
	void leave(std::size_t t, const Event &ev);
	void set_external(const Event &ev);
	void host_delta(std::uint64_t buffer, std::int64_t delta);
	void drain();

	const Trace &trace_;
	const ReplayPolicy &policy_;
	const ReplayOptions &opt_;
	struct EngineDeleter {
		void operator()(gos_engine *e) const { gos_engine_destroy(e); }
	};
	std::unique_ptr<gos_engine, EngineDeleter> engine_;
	gos_engine *eng_ = nullptr;	// engine_.get(), for brevity
	std::uint64_t now_ns_ = 0;
	double now_ = 0, next_sample_ = 0, sample_every_ = 0;
	std::uint64_t tick_no_ = 0;
	std::uint64_t physical_ = 0, capacity_now_ = 0, external_now_ = 0;
	std::vector<SimTenant> tenants_;
	std::unordered_map<std::uint64_t, SimBuffer> buffers_;
	std::vector<double> alloc_us_;
	double jain_area_ = 0, util_area_ = 0, util_time_ = 0;
	PolicyResult result_;
};

Replayer::Replayer(const Trace &trace, const ReplayPolicy &policy, const ReplayOptions &opt)
	: trace_(trace), policy_(policy), opt_(opt), tenants_(trace.tenants.size())
{
	gos_config cfg = policy.cfg;
	cfg.clock = &Replayer::clock;
	cfg.clock_ctx = this;
	int err = gos_engine_create(&cfg, &eng_);
	if (err)
		throw std::runtime_error("cannot create the engine for policy " + policy.name + ": " + std::strerror(-err));
	engine_.reset(eng_);
	// The GPU is as large as the largest capacity the trace ever names;
	// smaller capacities later are memory taken away from the engine.
	physical_ = opt.capacity;
	for (const Event &ev : trace.events)
		if (ev.op == Op::capacity && !opt.capacity)
			physical_ = std::max(physical_, ev.size);
	if (!physical_)
		throw std::runtime_error(trace.file + ": no 'capacity' line; give the GPU's memory with --capacity");
	capacity_now_ = opt.capacity ? opt.capacity : trace.first_capacity;
	err = gos_gpu_add(eng_, 0, physical_, 0);
	if (!err)
		err = gos_gpu_set_external(eng_, 0, physical_ - capacity_now_);
	if (err)
		throw std::runtime_error("cannot add the simulated GPU: " + std::string(std::strerror(-err)));
	sample_every_ = std::max(opt.tick_s, trace.duration() / 600);
	result_.policy = policy.name;
	result_.timeline.capacity = capacity_now_;
}

void Replayer::fail(const Event &ev, const std::string &what, int err) const
{
	throw std::runtime_error(trace_.file + ":" + std::to_string(ev.line) + ": " + what +
				 " failed in the engine: " + std::strerror(-err));
}

PolicyResult Replayer::run(const Progress &progress)
{
	std::size_t done = 0;
	for (const Event &ev : trace_.events) {
		advance_to(ev.time);
		apply(ev);
		drain();
		if (progress && (++done % 256 == 0 || done == trace_.events.size()))
			progress(done, trace_.events.size());
	}
	sample();

	result_.jain = result_.oversubscribed_s > 0 ? jain_area_ / result_.oversubscribed_s : 1;
	result_.utilization = util_time_ > 0 ? util_area_ / util_time_ : 1;
	result_.allocs = alloc_us_.size();
	result_.alloc_p50_us = percentile(alloc_us_, 0.50);
	result_.alloc_p99_us = percentile(alloc_us_, 0.99);
	result_.alloc_max_us = alloc_us_.empty() ? 0 : *std::max_element(alloc_us_.begin(), alloc_us_.end());
	for (std::size_t t = 0; t < tenants_.size(); t++) {
		SimTenant &st = tenants_[t];
		TenantResult r = st.past;
		if (st.joined) {
			gos_tenant_stats es{};
			gos_tenant_get_stats(eng_, st.id, &es);
			merge(r, es);
		}
		r.name = trace_.tenants[t];
		r.weight = st.weight;
		r.slowdown = st.ideal_s > 0 ? st.actual_s / st.ideal_s : 1;
		result_.bytes_moved += r.bytes_evicted + r.bytes_returned;
		result_.tenants.push_back(r);
	}
	return result_;
}

// Nothing on the host, nothing in flight: a tick can change nothing, so
// long quiet stretches of a trace are skipped rather than ticked through.
bool Replayer::quiet()
{
	gos_gpu_stats g{};
	gos_gpu_get_stats(eng_, 0, &g);
	if (g.outstanding_orders || g.waiting)
		return false;
	for (const SimTenant &st : tenants_) {
		gos_tenant_stats es{};
		if (st.joined && (gos_tenant_get_stats(eng_, st.id, &es) || es.host))
			return false;
	}
	return true;
}

void Replayer::advance_to(double t)
{
	// Tick times are computed from their index, so skipping and stepping
	// land on exactly the same instants.
	auto tick_time = [this](std::uint64_t n) { return static_cast<double>(n) * opt_.tick_s; };
	while (tick_time(tick_no_) <= t) {
		double until = std::min(t, next_sample_);
		if (tick_time(tick_no_ + 1) < until && quiet()) {
			auto last = static_cast<std::uint64_t>(until / opt_.tick_s);
			while (tick_time(last) >= until)
				last--;
			tick_no_ = std::max(tick_no_ + 1, last);
			continue;
		}
		integrate(tick_time(tick_no_));
		gos_tick(eng_);
		drain();
		if (now_ >= next_sample_) {
			sample();
			next_sample_ = now_ + sample_every_;
		}
		tick_no_++;
	}
	integrate(t);
}

// Accumulates time-weighted figures over [now_, t), during which the
// ledger is constant.
void Replayer::integrate(double t)
{
	double dt = t - now_;
	now_ = t;
	now_ns_ = static_cast<std::uint64_t>(std::llround(t * 1e9));
	if (dt <= 0)
		return;
	const double hbm = opt_.hbm_gbps * 1e9, link = opt_.link_gbps * 1e9;
	std::vector<std::uint64_t> demand, resident;
	std::vector<std::uint32_t> weight;
	std::uint64_t used = 0, total_demand = 0;
	for (SimTenant &st : tenants_) {
		if (!st.joined)
			continue;
		st.ideal_s += dt * st.traffic / hbm;
		st.actual_s += dt * ((st.traffic - st.host_traffic) / hbm + st.host_traffic / link);
		gos_tenant_stats es{};
		gos_tenant_get_stats(eng_, st.id, &es);
		demand.push_back(es.demand);
		resident.push_back(es.resident);
		weight.push_back(st.weight);
		used += es.resident;
		total_demand += es.demand;
	}
	std::uint64_t cap = capacity_now_ > external_now_ ? capacity_now_ - external_now_ : 0;
	if (total_demand) {
		util_area_ += dt * std::min(1.0, static_cast<double>(used) /
						 static_cast<double>(std::min(cap, total_demand)));
		util_time_ += dt;
	}
	if (total_demand <= cap || demand.empty())
		return;
	// Jain's index of resident/entitlement, against the admin's weights.
	std::vector<std::uint64_t> share(demand.size());
	gos_waterfill(static_cast<std::uint32_t>(demand.size()), demand.data(), weight.data(), cap, share.data());
	double sum = 0, sq = 0;
	int n = 0;
	for (std::size_t i = 0; i < share.size(); i++) {
		if (!share[i])
			continue;
		double x = static_cast<double>(resident[i]) / static_cast<double>(share[i]);
		sum += x;
		sq += x * x;
		n++;
	}
	if (n && sq > 0) {
		jain_area_ += dt * sum * sum / (n * sq);
		result_.oversubscribed_s += dt;
	}
}

void Replayer::sample()
{
	std::vector<std::uint64_t> row(tenants_.size(), 0);
	for (std::size_t t = 0; t < tenants_.size(); t++) {
		if (!tenants_[t].joined)
			continue;
		gos_tenant_stats es{};
		gos_tenant_get_stats(eng_, tenants_[t].id, &es);
		row[t] = es.resident;
	}
	result_.timeline.time.push_back(now_);
	result_.timeline.resident.push_back(std::move(row));
}

void Replayer::join(std::size_t t, const Event &ev)
{
	SimTenant &st = tenants_[t];
	if (st.joined)
		return;
	int err = gos_tenant_create(eng_, 0, policy_.weighted ? st.weight : 1, 0, &st.id);
	if (!err)
		err = gos_client_create(eng_, &st.client);
	if (err)
		fail(ev, "creating tenant " + trace_.tenants[t], err);
	st.joined = true;
}

void Replayer::leave(std::size_t t, const Event &ev)
{
	SimTenant &st = tenants_[t];
	if (!st.joined)
		return;
	int err = gos_client_exit(eng_, st.client);
	gos_tenant_stats es{};
	if (!err)
		err = gos_tenant_get_stats(eng_, st.id, &es);
	if (!err)
		err = gos_tenant_destroy(eng_, st.id);
	if (err)
		fail(ev, "exit of tenant " + trace_.tenants[t], err);
	merge(st.past, es);
	for (auto &[tag, id] : st.tags)
		buffers_.erase(id);
	st.tags.clear();
	st.traffic = st.host_traffic = 0;
	st.joined = false;
}

void Replayer::set_external(const Event &ev)
{
	std::uint64_t taken = physical_ - std::min(physical_, capacity_now_) + external_now_;
	int err = gos_gpu_set_external(eng_, 0, std::min(taken, physical_));
	if (err)
		fail(ev, "capacity change", err);
}

void Replayer::apply(const Event &ev)
{
	// GPU-wide events name no tenant, and a trace may have none at all.
	if (ev.op == Op::capacity || ev.op == Op::external) {
		if (ev.op == Op::capacity)
			capacity_now_ = opt_.capacity ? opt_.capacity : ev.size;
		else
			external_now_ = ev.size;
		set_external(ev);
		return;
	}
	SimTenant &st = tenants_[ev.tenant];
	int err = 0;
	switch (ev.op) {
	case Op::capacity:
	case Op::external:
		break;	// handled above
	case Op::weight:
		st.weight = static_cast<std::uint32_t>(ev.size);
		if (st.joined && policy_.weighted)
			err = gos_tenant_set_policy(eng_, st.id, st.weight, 0);
		if (err)
			fail(ev, "weight change", err);
		break;
	case Op::alloc: {
		join(ev.tenant, ev);
		gos_alloc_result res{};
		auto start = std::chrono::steady_clock::now();
		err = gos_alloc(eng_, st.client, st.id, ev.size, ev.priority, 0, &res);
		auto took = std::chrono::steady_clock::now() - start;
		if (err)
			fail(ev, "alloc", err);
		alloc_us_.push_back(std::chrono::duration<double, std::micro>(took).count());
		buffers_[res.buffer] = SimBuffer{ev.tenant, ev.size, ev.access, 0};
		st.tags[ev.tag] = res.buffer;
		st.traffic += ev.access * static_cast<double>(ev.size);
		host_delta(res.buffer, static_cast<std::int64_t>(res.host_bytes));
		break;
	}
	case Op::free: {
		std::uint64_t id = st.tags.at(ev.tag);
		const SimBuffer &b = buffers_.at(id);
		st.traffic -= b.access * static_cast<double>(b.size);
		st.host_traffic -= b.access * static_cast<double>(b.host);
		err = gos_free(eng_, st.client, id);
		if (err)
			fail(ev, "free", err);
		buffers_.erase(id);
		st.tags.erase(ev.tag);
		break;
	}
	case Op::prio: {
		std::uint64_t id = st.tags.at(ev.tag);
		err = gos_set_priority(eng_, st.client, id, 0, buffers_.at(id).size, ev.priority);
		if (err)
			fail(ev, "priority change", err);
		break;
	}
	case Op::exit:
		leave(ev.tenant, ev);
		break;
	}
}

void Replayer::host_delta(std::uint64_t buffer, std::int64_t delta)
{
	auto it = buffers_.find(buffer);
	if (it == buffers_.end())
		return;		// freed while the message was queued
	SimBuffer &b = it->second;
	b.host = static_cast<std::uint64_t>(static_cast<std::int64_t>(b.host) + delta);
	tenants_[b.tenant].host_traffic += b.access * static_cast<double>(delta);
}

// The agents' side: carry out every order at once and acknowledge it. The
// copy itself costs the tenant moved bytes over the host link.
void Replayer::drain()
{
	const double link = opt_.link_gbps * 1e9;
	for (bool more = true; more;) {
		more = false;
		for (SimTenant &st : tenants_) {
			if (!st.joined)
				continue;
			gos_message msgs[64];
			int n = gos_read_messages(eng_, st.client, msgs, 64);
			for (int i = 0; i < n; i++) {
				const gos_message &m = msgs[i];
				more = true;
				if (m.kind == GOS_MSG_SETTLED) {
					host_delta(m.buffer, static_cast<std::int64_t>(m.host_bytes));
				} else if (m.kind == GOS_MSG_EVICT || m.kind == GOS_MSG_RETURN) {
					auto len = static_cast<std::int64_t>(m.length);
					host_delta(m.buffer, m.kind == GOS_MSG_EVICT ? len : -len);
					st.actual_s += static_cast<double>(m.length) / link;
					gos_order_ack(eng_, st.client, m.id);
				}
			}
		}
	}
}

} // namespace

PolicyResult replay(const Trace &trace, const ReplayPolicy &policy, const ReplayOptions &opt, const Progress &progress)
{
	Replayer r(trace, policy, opt);
	return r.run(progress);
}

} // namespace gos::sim
