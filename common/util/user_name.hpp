// A uid as an admin reads it in a message, looked up in the user database.
#pragma once

#include <sys/types.h>

#include <string>

namespace gos {

// "root", the user's name, or "uid N" for a uid without one: the user a
// remedy (chown, install -o) names.
std::string user_name(uid_t uid);

// "uid N (name)", or "uid N" without a name: an owner as stat(2) gave it.
std::string uid_and_name(uid_t uid);

} // namespace gos
