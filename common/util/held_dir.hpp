// The directories root writes in, held open from the start. Each is opened
// one component at a time from / without following any link (its links,
// root's own, were resolved and checked by trusted_dir.hpp first), and the
// descriptor kept: a link re-pointed, or a directory renamed away and
// replaced, after the start redirects nothing written or removed there.
#pragma once

#include <string>

namespace gos {

// Opens and keeps DIR (again, if held before). Throws std::runtime_error
// naming the component that is missing or is a link.
void hold_directory(const std::string &dir);

// The held descriptor of DIR, the path hold_directory was given; -1 if it
// is not held (the program then opens it by name).
int held_directory(const std::string &dir);

// open(2) of PATH, relative to its directory's held descriptor where that
// is held; MODE for O_CREAT.
int open_in_held(const std::string &path, int flags, unsigned mode = 0);

} // namespace gos
