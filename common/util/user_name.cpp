#include "common/util/user_name.hpp"

#include <pwd.h>

namespace gos {

std::string user_name(uid_t uid)
{
	if (uid == 0)
		return "root";
	const passwd *pw = ::getpwuid(uid);
	return pw ? std::string(pw->pw_name) : "uid " + std::to_string(uid);
}

std::string uid_and_name(uid_t uid)
{
	const passwd *pw = ::getpwuid(uid);
	return "uid " + std::to_string(uid) + (pw ? " (" + std::string(pw->pw_name) + ")" : "");
}

} // namespace gos
