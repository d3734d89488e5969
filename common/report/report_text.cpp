#include "common/report/report_text.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <vector>

#include "common/util/text.hpp"
#include "common/util/units.hpp"

namespace gos::report {

std::string who_ran(const Rank &rank)
{
	return rank.rank < 0 ? "process " + std::to_string(rank.pid)
			     : "rank " + std::to_string(rank.rank) + " (pid " + std::to_string(rank.pid) + ")";
}

std::string weights_text(const Report &r)
{
	std::ostringstream s;
	for (const GpuWeight &w : r.weights.value_or(std::vector<GpuWeight>{})) {
		s << "  GPU " << w.gpu << " weight " << w.nominal << ":";
		const char *sep = " ";
		for (const WeightFactor &f : w.derivation) {
			s << sep << escaped(f.fact) << " x" << f.factor << " (" << escaped(f.why) << ")";
			sep = "; ";
		}
		s << "\n";
	}
	return s.str();
}

std::string node_and_gpus(const Report &r)
{
	std::string s = r.node.empty() ? "" : " on node " + r.node;	// reports before 2026-11 name none
	std::string sep = ", GPU ";
	for (const GpuPart &g : r.gpus) {
		// A MIG instance shares its parent's bus id; its UUID tells it apart.
		s += sep + std::to_string(g.gpu) + " (" + escaped(g.pci_bus_id) + (g.uuid.empty() ? "" : " " + escaped(g.uuid)) + ")";
		sep = ", ";
	}
	return s;
}

std::string restarts_text(const Report &r)
{
	std::ostringstream s;
	for (const DaemonRestart &x : r.daemon_restarts) {	// none before 2026-11
		s << "  gpuoversubd restarted at " << escaped(x.at) << ":";
		const char *sep = " ";
		for (const RestartGpu &g : x.gpus) {
			s << sep << "GPU " << g.gpu << " (" << escaped(g.pci_bus_id) << ") "
			  << (g.kept ? "kept its counters" : "counters restarted from the saved record");
			sep = "; ";
		}
		s << "\n";
	}
	if (r.daemon_restarts_omitted)
		s << "  and " << r.daemon_restarts_omitted << " more restart(s)\n";
	return s.str();
}

// One line per rank up to this many; beyond, the count and the ranks that
// allocated most (the JSON report lists every one), so that a 1,024-rank
// job's end is a few lines of the log, not a thousand.
static constexpr std::size_t ranks_listed = 8;

static std::string ranks_text(const Report &r)
{
	// No agent said hello: the job's processes ran without one, or never
	// used the GPU. Said once per job and node, with the likely fix.
	if (r.ranks.empty())
		return "  no process of this job reached gpuoversubd here: any GPU memory it used was not managed (in a "
		       "container, bind the agent in: gpuoversub(7), CONTAINERS)\n";
	std::vector<const Rank *> shown;
	for (const Rank &rk : r.ranks)
		shown.push_back(&rk);
	std::ostringstream s;
	if (shown.size() > ranks_listed) {
		std::partial_sort(shown.begin(), shown.begin() + ranks_listed, shown.end(),
				  [](const Rank *a, const Rank *b) { return a->bytes_allocated > b->bytes_allocated; });
		s << "  " << shown.size() << " ranks; the " << ranks_listed << " that allocated most:\n";
		shown.resize(ranks_listed);
	}
	for (const Rank *rk : shown)
		s << "  " << who_ran(*rk) << ": " << rk->allocs << " allocations, " << format_bytes(rk->bytes_allocated)
		  << ", evicted " << format_bytes(rk->bytes_evicted) << "\n";
	return s.str();
}

std::string report_summary(const Report &r)
{
	std::ostringstream s;
	char line[256];
	s << "gpuoversub report for job " << r.job << node_and_gpus(r) << "\n";
	s << "  peak on GPU " << format_bytes(r.peak_device_bytes) << ", peak in host RAM " << format_bytes(r.peak_host_bytes)
	  << "\n";
	s << "  evicted " << format_bytes(r.bytes_evicted) << " in " << r.evictions << " chunks, returned "
	  << format_bytes(r.bytes_returned) << " in " << r.returns << " chunks\n";
	std::snprintf(line, sizeof line, "  oversubscribed for %.1f s; allocation latency added p50 %.1f us, p99 %.1f us\n",
		      r.oversubscribed_s, r.alloc_latency_us.p50, r.alloc_latency_us.p99);
	s << line;
	s << "  throttled " << r.throttle_events << " times, advice given " << r.advice_events << " times\n";
	std::uint64_t unmanaged = 0;
	for (const GpuPart &g : r.gpus)
		unmanaged += g.peak_unmanaged;
	if (unmanaged)
		s << "  unmanaged: its processes without the agent held up to " << format_bytes(unmanaged)
		  << " on the GPU, charged to the job\n";
	s << weights_text(r);
	s << restarts_text(r);
	s << ranks_text(r);
	return s.str();
}

} // namespace gos::report
