#include "common/report/report_text.hpp"

#include <cstdio>
#include <sstream>

#include "common/util/text.hpp"
#include "common/util/units.hpp"

namespace gos::gpud {

std::string who_ran(const nlohmann::json &rank)
{
	int rk = rank["rank"].get<int>(), pid = rank["pid"].get<int>();
	return rk < 0 ? "process " + std::to_string(pid) : "rank " + std::to_string(rk) + " (pid " + std::to_string(pid) + ")";
}

std::string weights_text(const nlohmann::json &r)
{
	std::ostringstream s;
	for (const auto &w : r.value("weights", nlohmann::json::array())) {
		s << "  GPU " << w["gpu"].get<unsigned>() << " weight " << w["nominal"].get<double>() << ":";
		const char *sep = " ";
		for (const auto &f : w["derivation"]) {
			s << sep << escaped(f["fact"].get<std::string>()) << " x" << f["factor"].get<double>() << " ("
			  << escaped(f["why"].get<std::string>()) << ")";
			sep = "; ";
		}
		s << "\n";
	}
	return s.str();
}

std::string node_and_gpus(const nlohmann::json &r)
{
	std::string s = r.value("node", "");
	s = s.empty() ? "" : " on node " + s;	// reports before 2026-11 name none
	std::string sep = ", GPU ";
	for (const auto &g : r.value("gpus", nlohmann::json::array())) {
		s += sep + std::to_string(g.value("gpu", 0u)) + " (" + g.value("pci_bus_id", std::string("?")) + ")";
		sep = ", ";
	}
	return s;
}

std::string restarts_text(const nlohmann::json &r)
{
	std::ostringstream s;
	for (const auto &x : r.value("daemon_restarts", nlohmann::json::array())) {	// none before 2026-11
		s << "  gpuoversubd restarted at " << escaped(x["at"].get<std::string>()) << ":";
		const char *sep = " ";
		for (const auto &g : x["gpus"]) {
			bool kept = g["counters"] == "kept";
			s << sep << "GPU " << g["gpu"].get<unsigned>() << " (" << escaped(g["pci_bus_id"].get<std::string>())
			  << ") " << (kept ? "kept its counters" : "counters restarted from the saved record");
			sep = "; ";
		}
		s << "\n";
	}
	if (std::uint64_t more = r.value("daemon_restarts_omitted", std::uint64_t{0}))
		s << "  and " << more << " more restart(s)\n";
	return s.str();
}

std::string report_summary(const nlohmann::json &r)
{
	std::ostringstream s;
	char line[256];
	s << "gpuoversub report for job " << r["job"].get<std::uint64_t>() << node_and_gpus(r) << "\n";
	s << "  peak on GPU " << format_bytes(r["peak_device_bytes"]) << ", peak in host RAM "
	  << format_bytes(r["peak_host_bytes"]) << "\n";
	s << "  evicted " << format_bytes(r["bytes_evicted"]) << " in " << r["evictions"].get<std::uint64_t>()
	  << " chunks, returned " << format_bytes(r["bytes_returned"]) << " in " << r["returns"].get<std::uint64_t>()
	  << " chunks\n";
	std::snprintf(line, sizeof line, "  oversubscribed for %.1f s; allocation latency added p50 %.1f us, p99 %.1f us\n",
		      r["oversubscribed_s"].get<double>(), r["alloc_latency_us"]["p50"].get<double>(),
		      r["alloc_latency_us"]["p99"].get<double>());
	s << line;
	s << "  throttled " << r["throttle_events"].get<std::uint64_t>() << " times, advice given "
	  << r["advice_events"].get<std::uint64_t>() << " times\n";
	s << weights_text(r);
	s << restarts_text(r);
	for (const auto &rk : r["ranks"])
		s << "  " << who_ran(rk) << ": "
		  << rk["allocs"].get<std::uint64_t>() << " allocations, " << format_bytes(rk["bytes_allocated"])
		  << ", evicted " << format_bytes(rk["bytes_evicted"]) << "\n";
	return s.str();
}

} // namespace gos::gpud
