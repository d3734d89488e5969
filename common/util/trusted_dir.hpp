// Whether a directory root keeps files in is root's alone. A directory that
// another user owns, or that group or others may write, lets them plant
// symbolic links, fake records or a fake socket there; so does an ancestor
// they can write that is not sticky (they could rename the directory away
// and put their own in its place). An admin's mistake becomes an error at
// start, not a hole.
#pragma once

#include <string>

namespace gos {

// Empty when PATH (if it exists) is owned by our effective uid and not
// writable by group or others, and every existing ancestor is owned by
// root or our uid and, if group- or other-writable, sticky. Otherwise one
// line naming ROLE, the directory at fault, its owner and mode, and the fix.
std::string untrusted_directory(const std::string &role, const std::string &path);

} // namespace gos
