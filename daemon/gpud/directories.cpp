#include "daemon/gpud/directories.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "common/util/atomic_file.hpp"
#include "common/util/held_dir.hpp"
#include "common/util/trusted_dir.hpp"
#include "common/util/user_name.hpp"

namespace gos::gpud {
namespace {

std::string directory_of(const std::string &file)
{
	std::size_t slash = file.find_last_of('/');
	return slash == std::string::npos || slash == 0 ? "/" : file.substr(0, slash);
}

// Under the unit's ProtectSystem=strict, every path but the unit's own
// directories and its ReadWritePaths= is read-only, and the unit's user
// (not root) may write only where it was let: a directory the policy
// moves elsewhere is refused here, by name and with the remedy, before
// the first report or record fails to be written. A directory not made yet
// is judged where it would be made. (The kernel says EACCES before EROFS.)
std::string not_writable(const std::string &role, const std::string &path)
{
	std::string at = path;
	struct stat st;
	while (::stat(at.c_str(), &st) != 0 && at != "/")
		at = directory_of(at);
	const int err = ::faccessat(AT_FDCWD, at.c_str(), W_OK, AT_EACCESS) == 0 ? 0 : errno;
	if (err != EROFS && err != EACCES)
		return "";
	const std::string where = at != path ? " (at " + at + ")" : "";
	const std::string unit = "under the systemd unit (ProtectSystem=strict) let the daemon write there: "
				 "`systemctl edit gpuoversubd` with [Service] ReadWritePaths=" + path;
	if (err == EROFS)
		return "the " + role + " " + path + " is on a read-only file system" + where + "; make it, then " + unit;
	const std::string me = user_name(::geteuid());
	const std::string own = at != path ? "install -d -o " + me + " -g " + me + " " + path : "chown " + me + ": " + path;
	return "the " + role + " " + path + " cannot be " + (at != path ? "made" : "written") + " by " + me + where +
	       "; make it " + me + "'s own (" + own + "), and " + unit;
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
		for (const std::string &why : {untrusted_directory(role, path), not_writable(role, path)})
			if (!why.empty())
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
