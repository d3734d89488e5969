#include "common/config/oversub.hpp"

#include <charconv>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "common/util/units.hpp"

namespace gos::config {

const char *const accepted_values =
	"on, off (any case), a FACTOR of the fair share such as 2, 1.5 or 2x, or a SIZE such as 40G (units K, M, G, T)";

std::string Request::text() const
{
	char buf[64];
	switch (kind) {
	case Kind::off: return "off";
	case Kind::on: return "on";
	case Kind::factor: std::snprintf(buf, sizeof buf, "%g", factor); return buf;
	case Kind::size: return format_bytes(size);
	}
	return "?";
}

std::optional<Request> parse_request(std::string_view value, std::string &why)
{
	Request r;
	std::string lower(value);
	for (char &c : lower)
		c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
	if (value.empty() || lower == "on" || lower == "yes") {
		r.kind = Request::Kind::on;
		return r;
	}
	if (lower == "off" || lower == "no" || lower == "0") {
		r.kind = Request::Kind::off;
		return r;
	}
	// A factor may be written 2x or 1.5X.
	std::string_view number = lower;
	if (number.size() > 1 && number.back() == 'x')
		number.remove_suffix(1);
	double f = 0;
	auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), f);
	if (ec == std::errc() && end == number.data() + number.size()) {
		if (!std::isfinite(f) || f <= 0 || f > 1000) {
			why = "--gpu-mem-oversub=" + std::string(value) + ": a FACTOR must be above 0 and at most 1000";
			return std::nullopt;
		}
		r.kind = Request::Kind::factor;
		r.factor = f;
		return r;
	}
	auto size = parse_size(value);
	if (!size || !*size) {
		why = "--gpu-mem-oversub=" + std::string(value) + " is not understood; accepted: " + accepted_values;
		return std::nullopt;
	}
	r.kind = Request::Kind::size;
	r.size = *size;
	return r;
}

std::optional<Request> apply_ceiling(Request r, const Chosen<double> &ceiling, bool refuse, std::string &message)
{
	message.clear();
	if (r.kind != Request::Kind::factor || r.factor <= ceiling.value)
		return r;
	char buf[384];
	if (refuse) {
		std::snprintf(buf, sizeof buf,
			      "--gpu-mem-oversub=%g is refused: this cluster allows a factor of at most %g (%s)", r.factor,
			      ceiling.value, ceiling.entry.c_str());
		message = buf;
		return std::nullopt;
	}
	std::snprintf(buf, sizeof buf, "--gpu-mem-oversub=%g is clamped to this cluster's ceiling of %g (%s)", r.factor,
		      ceiling.value, ceiling.entry.c_str());
	message = buf;
	r.factor = ceiling.value;
	return r;
}

} // namespace gos::config
