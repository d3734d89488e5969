#include "common/util/trusted_dir.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>

#include "common/util/user_name.hpp"

namespace gos {
namespace {

std::string owner_and_mode(const struct stat &st)
{
	char mode[8];
	std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
	return "owned by " + uid_and_name(st.st_uid) + " with mode " + mode;
}

std::string parent_of(const std::string &path)
{
	std::size_t slash = path.find_last_of('/');
	return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

// The path's own check, every component read with lstat: a link is judged
// as the link, never as what it points at today.
std::string untrusted_components(const std::string &role, const std::string &path, bool &linked)
{
	const uid_t me = ::geteuid();
	const std::string us = user_name(me);
	struct stat st;
	for (std::string dir = path;; dir = parent_of(dir)) {
		if (::lstat(dir.c_str(), &st) != 0) {
			if (dir == "/")
				break;
			continue;	// created by the daemon, as its own
		}
		bool last = dir == path;
		if (S_ISLNK(st.st_mode)) {
			// Only its owner (or root) may replace a link in a sticky or
			// closed directory: root's link points where root says.
			if (st.st_uid != 0 && st.st_uid != me)
				return role + " " + path + (last ? " is" : " lies under") + " a symbolic link, " + dir + ", " +
				       owner_and_mode(st) + ", who could point it anywhere; name a directory of " + us +
				       " itself";
			linked = true;
		} else if (last && !S_ISDIR(st.st_mode)) {
			return role + " " + path + " is not a directory";
		} else if (last && (st.st_uid != me || (st.st_mode & 022))) {
			return role + " " + path + " is " + owner_and_mode(st) + "; it must be owned by " + us +
			       " and writable by no one else (chown " + us + " " + path + " && chmod go-w " + path + ")";
		} else if (!last && ((st.st_uid != 0 && st.st_uid != me) || ((st.st_mode & 022) && !(st.st_mode & S_ISVTX)))) {
			return role + " " + path + " lies in " + dir + ", " + owner_and_mode(st) +
			       ", where another user could replace it; use a directory whose every parent is owned by " + us +
			       " and writable by no one else";
		}
		if (dir == "/")
			break;
	}
	return "";
}

} // namespace

std::string untrusted_directory(const std::string &role, const std::string &path)
{
	bool linked = false;
	if (auto why = untrusted_components(role, path, linked); !why.empty() || !linked)
		return why;
	// Root's links: where they lead must be safe too.
	char real[PATH_MAX];
	if (!::realpath(path.c_str(), real))
		return "";	// a part is yet to be made, by the daemon
	bool again = false;
	return untrusted_components(role + " (by way of its links)", real, again);
}

} // namespace gos
