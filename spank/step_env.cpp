#include "spank/step_env.hpp"

#include <algorithm>
#include <charconv>
#include <sstream>

namespace gos::spank {

std::optional<std::vector<std::uint32_t>> parse_gpu_list(std::string_view text)
{
	std::vector<std::uint32_t> out;
	if (text.empty())
		return std::nullopt;
	std::size_t pos = 0;
	while (pos <= text.size()) {
		std::size_t comma = text.find(',', pos);
		std::string_view item = text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
		std::size_t dash = item.find('-');
		std::uint32_t lo = 0, hi = 0;
		auto num = [](std::string_view s, std::uint32_t &v) {
			auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
			return !s.empty() && ec == std::errc() && end == s.data() + s.size();
		};
		if (dash == std::string_view::npos) {
			if (!num(item, lo))
				return std::nullopt;
			hi = lo;
		} else if (!num(item.substr(0, dash), lo) || !num(item.substr(dash + 1), hi) || hi < lo || hi - lo > 64) {
			return std::nullopt;
		}
		for (std::uint32_t g = lo; g <= hi; g++)
			out.push_back(g);
		if (comma == std::string_view::npos)
			break;
		pos = comma + 1;
	}
	return out;
}

bool names_by_uuid(std::string_view visible)
{
	return visible.starts_with("MIG-") || visible.starts_with("GPU-");
}

namespace {

// The GPU one entry of CUDA_VISIBLE_DEVICES names, or none.
std::optional<std::uint32_t> gpu_named(std::string_view name, const std::vector<status::GpuStatus> &gpus)
{
	if (name.size() <= 4)
		return std::nullopt;	// "", or a bare "MIG-": never a GPU without a UUID
	// The form before R470: the parent's UUID, the GPU and compute instance ids.
	if (name.starts_with("MIG-GPU-")) {
		std::string_view rest = name.substr(4);
		std::size_t slash = rest.find('/');
		std::uint32_t gi = 0;
		if (slash == std::string_view::npos)
			return std::nullopt;
		std::string_view ids = rest.substr(slash + 1);
		auto [end, ec] = std::from_chars(ids.data(), ids.data() + ids.size(), gi);
		if (ec != std::errc() || end == ids.data() || (end != ids.data() + ids.size() && *end != '/'))
			return std::nullopt;
		for (const auto &g : gpus)
			if (g.mig_parent == rest.substr(0, slash) && g.gpu_instance == gi)
				return g.gpu;
		return std::nullopt;
	}
	std::optional<std::uint32_t> found;
	for (const auto &g : gpus) {
		// A compute instance names its GPU instance, whose memory it shares.
		if (g.uuid == name || std::find(g.mig_devices.begin(), g.mig_devices.end(), name) != g.mig_devices.end())
			return g.gpu;
		if (name.starts_with("GPU-") && g.uuid.starts_with(name)) {
			if (found)
				return std::nullopt;	// ambiguous
			found = g.gpu;
		}
	}
	return found;
}

} // namespace

std::optional<std::vector<std::uint32_t>> gpus_by_uuid(std::string_view visible,
							const std::vector<status::GpuStatus> &gpus)
{
	std::vector<std::uint32_t> out;
	std::size_t pos = 0;
	while (pos <= visible.size()) {
		std::size_t comma = visible.find(',', pos);
		std::string_view name = visible.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
		auto g = gpu_named(name, gpus);
		if (!g)
			return std::nullopt;
		out.push_back(*g);
		if (comma == std::string_view::npos)
			break;
		pos = comma + 1;
	}
	return out;
}

std::string preload_with(std::string_view existing, const std::vector<std::string> &libs)
{
	std::vector<std::string> parts(libs.begin(), libs.end());
	std::string rest(existing);
	std::replace(rest.begin(), rest.end(), ':', ' ');
	std::istringstream in(rest);
	for (std::string p; in >> p;)
		if (std::find(parts.begin(), parts.end(), p) == parts.end())
			parts.push_back(p);
	std::string out;
	for (const auto &p : parts)
		out += (out.empty() ? "" : " ") + p;
	return out;
}

} // namespace gos::spank
