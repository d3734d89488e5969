#include "common/util/trusted_dir.hpp"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

namespace gos {
namespace {

std::string owner_and_mode(const struct stat &st)
{
	const passwd *pw = ::getpwuid(st.st_uid);
	char mode[8];
	std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
	return "owned by uid " + std::to_string(st.st_uid) + (pw ? " (" + std::string(pw->pw_name) + ")" : "") +
	       " with mode " + mode;
}

std::string parent_of(const std::string &path)
{
	std::size_t slash = path.find_last_of('/');
	return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

} // namespace

std::string untrusted_directory(const std::string &role, const std::string &path)
{
	const uid_t me = ::geteuid();
	const std::string us = me == 0 ? "root" : "uid " + std::to_string(me);
	struct stat st;
	if (::stat(path.c_str(), &st) == 0) {
		if (!S_ISDIR(st.st_mode))
			return role + " " + path + " is not a directory";
		if (st.st_uid != me || (st.st_mode & 022))
			return role + " " + path + " is " + owner_and_mode(st) + "; it must be owned by " + us +
			       " and writable by no one else (chown " + us + " " + path + " && chmod go-w " + path + ")";
	}
	for (std::string dir = path; dir != "/";) {
		dir = parent_of(dir);
		if (::stat(dir.c_str(), &st) != 0)
			continue;	// created by the daemon, as its own
		bool shared = st.st_mode & 022;
		if ((st.st_uid != 0 && st.st_uid != me) || (shared && !(st.st_mode & S_ISVTX)))
			return role + " " + path + " lies in " + dir + ", " + owner_and_mode(st) +
			       ", where another user could replace it; use a directory whose every parent is owned by " + us +
			       " and writable by no one else";
	}
	return "";
}

} // namespace gos
