#include "daemon/gpud/jobwide_pending.hpp"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "common/jobwide/frame.hpp"
#include "common/util/atomic_file.hpp"
#include "common/util/regular_file.hpp"

namespace gos::gpud {
namespace {

constexpr std::string_view prefix = "jobwide-outbox-", suffix = ".json";
// A frame (16 KiB at most, as hex) and a node list (64 KiB at most).
constexpr std::size_t max_file = 160 * 1024;

std::string hex(const std::string &bytes)
{
	static constexpr char digits[] = "0123456789abcdef";
	std::string out;
	out.reserve(bytes.size() * 2);
	for (unsigned char c : bytes) {
		out += digits[c >> 4];
		out += digits[c & 15];
	}
	return out;
}

std::string unhex(const std::string &text)
{
	auto value = [](char c) -> int {
		if (c >= '0' && c <= '9')
			return c - '0';
		if (c >= 'a' && c <= 'f')
			return c - 'a' + 10;
		throw std::runtime_error("the frame is not hex");
	};
	if (text.size() % 2)
		throw std::runtime_error("the frame is not hex");
	std::string out;
	for (std::size_t i = 0; i < text.size(); i += 2)
		out += static_cast<char>(value(text[i]) << 4 | value(text[i + 1]));
	return out;
}

} // namespace

std::string pending_path(const std::string &state_dir, std::uint64_t job, std::int64_t start)
{
	return state_dir + "/" + std::string(prefix) + std::to_string(job) + "-" + std::to_string(start) +
	       std::string(suffix);
}

void save_pending(const std::string &state_dir, const RunEnd &end, std::int64_t saved_at)
{
	const nlohmann::json j = {{"job", end.job},	      {"start", end.start},	  {"run", end.run},
				  {"num_nodes", end.num_nodes}, {"node", end.node},	  {"nodelist", end.nodelist},
				  {"frame", hex(end.frame)},	{"saved_at", saved_at}};
	write_file_atomically(pending_path(state_dir, end.job, end.start), j.dump() + "\n", 0600);
}

void drop_pending(const std::string &state_dir, std::uint64_t job, std::int64_t start)
{
	remove_file(pending_path(state_dir, job, start));
}

std::vector<SavedEnd> load_pending(const std::string &state_dir, std::size_t max, std::vector<std::string> &problems)
{
	std::vector<SavedEnd> out;
	std::error_code ec;
	for (std::filesystem::directory_iterator d(state_dir, ec), stop; !ec && d != stop && out.size() < max;
	     d.increment(ec)) {
		const std::string name = d->path().filename().string();
		if (!name.starts_with(prefix) || !name.ends_with(suffix))
			continue;
		const std::string path = d->path().string();
		try {
			const auto j = nlohmann::json::parse(read_regular_file(path, {max_file, true}));
			SavedEnd s;
			s.end = {j.at("job").get<std::uint64_t>(),	 j.at("start").get<std::int64_t>(),
				 j.at("run").get<std::uint32_t>(),	 j.at("num_nodes").get<std::uint32_t>(),
				 j.at("node").get<std::string>(),	 j.at("nodelist").get<std::string>(),
				 unhex(j.at("frame").get<std::string>())};
			s.saved_at = j.at("saved_at").get<std::int64_t>();
			// By name, not path: state_dir may be written with a trailing slash.
			if (name != std::filesystem::path(pending_path(state_dir, s.end.job, s.end.start)).filename())
				throw std::runtime_error("it names another run");
			out.push_back(std::move(s));
		} catch (const std::exception &e) {
			problems.push_back(path + ": " + e.what());
		}
	}
	return out;
}

} // namespace gos::gpud
