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
