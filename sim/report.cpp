#include "sim/report.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "common/util/units.hpp"

namespace gos::sim {
namespace {

std::string fixed(double v, int digits)
{
	char buf[64];
	std::snprintf(buf, sizeof buf, "%.*f", digits, v);
	return buf;
}

std::string pad(const std::string &s, std::size_t width, bool right = false)
{
	if (s.size() >= width)
		return s;
	std::string fill(width - s.size(), ' ');
	return right ? fill + s : s + fill;
}

std::string xml_escape(const std::string &s)
{
	std::string out;
	for (char c : s) {
		switch (c) {
		case '<': out += "&lt;"; break;
		case '>': out += "&gt;"; break;
		case '&': out += "&amp;"; break;
		case '"': out += "&quot;"; break;
		default: out += c;
		}
	}
	return out;
}

} // namespace

void write_table(std::ostream &out, const Trace &trace, const ReplayOptions &opt,
		 const std::vector<ReplayPolicy> &policies, const std::vector<PolicyResult> &results)
{
	std::uint64_t cap = results.empty() ? 0 : results.front().timeline.capacity;
	out << "Trace " << trace.file << ": " << trace.tenants.size() << " tenants, "
	    << trace.events.size() << " events over " << fixed(trace.duration(), 1) << " s, GPU "
	    << format_bytes(cap) << "\n"
	    << "Cost model: HBM " << fixed(opt.hbm_gbps, 0) << " GB/s, host link " << fixed(opt.link_gbps, 0)
	    << " GB/s; chunk " << format_bytes(opt.chunk_size) << ", return interval "
	    << fixed(opt.tick_s * 1000, 0) << " ms\n\n";

	std::size_t name_w = 12;	// wide enough for gpuoversub-undamped too
	for (const auto &r : results)
		name_w = std::max(name_w, r.policy.size() + 1);
	out << pad("policy", name_w) << pad("fairness", 10, true) << pad("util", 8, true)
	    << pad("moved", 12, true) << pad("alloc p50", 11, true) << pad("p99", 11, true)
	    << pad("worst slowdown", 16, true) << "  how it decides\n";
	for (std::size_t i = 0; i < results.size(); i++) {
		const PolicyResult &r = results[i];
		double worst = 1;
		for (const auto &t : r.tenants)
			worst = std::max(worst, t.slowdown);
		out << pad(r.policy, name_w) << pad(fixed(r.jain, 3), 10, true)
		    << pad(fixed(r.utilization * 100, 1) + "%", 8, true) << pad(format_bytes(r.bytes_moved), 12, true)
		    << pad(fixed(r.alloc_p50_us, 2) + " us", 11, true) << pad(fixed(r.alloc_p99_us, 1) + " us", 11, true)
		    << pad(fixed(worst, 2) + "x", 16, true) << "  " << policies[i].summary << "\n";
	}
	out << "\nfairness: Jain's index of resident/entitled bytes while the GPU is oversubscribed (1 = fair)\n"
	    << "util: device bytes in use / min(capacity, demand), time-weighted\n\n"
	    << "Estimated slowdown per tenant (1.00 = all its data in HBM):\n"
	    << pad("tenant", 14) << pad("weight", 7, true);
	for (const auto &r : results)
		out << pad(r.policy, std::max<std::size_t>(12, r.policy.size() + 2), true);
	out << "\n";
	for (std::size_t t = 0; t < trace.tenants.size(); t++) {
		out << pad(trace.tenants[t], 14) << pad(std::to_string(results.front().tenants[t].weight), 7, true);
		for (const auto &r : results)
			out << pad(fixed(r.tenants[t].slowdown, 2), std::max<std::size_t>(12, r.policy.size() + 2), true);
		out << "\n";
	}
}

void write_csv(std::ostream &out, const std::vector<PolicyResult> &results)
{
	out << "policy,tenant,weight,jain,utilization,bytes_moved,alloc_p50_us,alloc_p99_us,"
	       "slowdown,bytes_evicted,bytes_returned,bytes_host_placed,peak_resident,peak_host,oversub_s\n";
	for (const auto &r : results)
		for (const auto &t : r.tenants)
			out << r.policy << ',' << t.name << ',' << t.weight << ',' << fixed(r.jain, 4) << ','
			    << fixed(r.utilization, 4) << ',' << r.bytes_moved << ',' << fixed(r.alloc_p50_us, 3) << ','
			    << fixed(r.alloc_p99_us, 3) << ',' << fixed(t.slowdown, 4) << ',' << t.bytes_evicted << ','
			    << t.bytes_returned << ',' << t.bytes_host_placed << ',' << t.peak_resident << ','
			    << t.peak_host << ',' << fixed(t.oversub_s, 3) << '\n';
}

void write_svg(std::ostream &out, const Trace &trace, const std::vector<PolicyResult> &results)
{
	static const char *colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
				       "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};
	const double width = 760, panel = 170, left = 60, top = 30, plot_w = 560, plot_h = 120;
	double duration = std::max(trace.duration(), 1e-9);
	double height = top + panel * static_cast<double>(results.size()) + 20;
	out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
	    << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
	    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
	    << "<text x=\"" << left << "\" y=\"18\" font-size=\"13\">Resident GPU memory per tenant: "
	    << xml_escape(trace.file) << "</text>\n";
	for (std::size_t p = 0; p < results.size(); p++) {
		const PolicyResult &r = results[p];
		double y0 = top + panel * static_cast<double>(p) + 10;
		double cap = static_cast<double>(std::max<std::uint64_t>(r.timeline.capacity, 1));
		auto x_of = [&](double t) { return left + plot_w * t / duration; };
		auto y_of = [&](double bytes) { return y0 + plot_h - plot_h * std::min(bytes / cap, 1.05) / 1.05; };
		out << "<text x=\"" << left << "\" y=\"" << y0 - 2 << "\" font-weight=\"bold\">" << r.policy
		    << "</text>\n<rect x=\"" << left << "\" y=\"" << y0 << "\" width=\"" << plot_w << "\" height=\""
		    << plot_h << "\" fill=\"none\" stroke=\"#999\"/>\n<line x1=\"" << left << "\" x2=\"" << left + plot_w
		    << "\" y1=\"" << y_of(cap) << "\" y2=\"" << y_of(cap)
		    << "\" stroke=\"#444\" stroke-dasharray=\"4 3\"/>\n<text x=\"4\" y=\"" << y_of(cap) + 4 << "\">"
		    << format_bytes(r.timeline.capacity) << "</text>\n<text x=\"4\" y=\"" << y0 + plot_h << "\">0</text>\n";
		for (std::size_t t = 0; t < trace.tenants.size(); t++) {
			out << "<polyline fill=\"none\" stroke-width=\"1.5\" stroke=\"" << colors[t % 8] << "\" points=\"";
			for (std::size_t s = 0; s < r.timeline.time.size(); s++)
				out << fixed(x_of(r.timeline.time[s]), 1) << ','
				    << fixed(y_of(static_cast<double>(r.timeline.resident[s][t])), 1) << ' ';
			out << "\"/>\n";
		}
		out << "<text x=\"" << left + plot_w << "\" y=\"" << y0 + plot_h + 12 << "\" text-anchor=\"end\">"
		    << fixed(duration, 1) << " s</text>\n";
	}
	for (std::size_t t = 0; t < trace.tenants.size(); t++)
		out << "<text x=\"" << left + plot_w + 12 << "\" y=\"" << top + 24 + 14 * static_cast<double>(t)
		    << "\" fill=\"" << colors[t % 8] << "\">" << xml_escape(trace.tenants[t]) << "</text>\n";
	out << "</svg>\n";
}

} // namespace gos::sim
