#include "daemon/gpud/directories.hpp"

#include "common/util/atomic_file.hpp"
#include "common/util/held_dir.hpp"
#include "common/util/trusted_dir.hpp"

namespace gos::gpud {
namespace {

std::string directory_of(const std::string &file)
{
	std::size_t slash = file.find_last_of('/');
	return slash == std::string::npos || slash == 0 ? "/" : file.substr(0, slash);
}

} // namespace

std::vector<std::string> directory_problems(const config::Config &cfg)
{
	std::vector<std::pair<std::string, std::string>> dirs = {
		{"state directory", cfg.start.state_dir},
		{"report directory", cfg.policy.report_dir},
		{"socket directory", directory_of(cfg.start.socket)},
	};
	if (!cfg.policy.exporter_textfile.empty())
		dirs.emplace_back("textfile directory", directory_of(cfg.policy.exporter_textfile));
	std::vector<std::string> problems;
	for (const auto &[role, path] : dirs)
		if (auto why = untrusted_directory(role, path); !why.empty())
			problems.push_back(why);
	return problems;
}

void make_own_directories(const config::Config &cfg)
{
	make_dirs(cfg.start.state_dir, 0700);
	make_dirs(cfg.policy.report_dir, 0755);
	make_dirs(directory_of(cfg.start.socket), 0755);
}

void hold_own_directories(const config::Config &cfg)
{
	hold_directory(cfg.start.state_dir);
	hold_directory(cfg.policy.report_dir);
	if (!cfg.policy.exporter_textfile.empty())
		hold_directory(directory_of(cfg.policy.exporter_textfile));
}

} // namespace gos::gpud
