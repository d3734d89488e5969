// Writes a file so that readers see the old or the new content, never a
// mix, even across a crash: write a temporary, fsync it, rename it over the
// target, fsync the directory. Root writes these files into directories
// that must be its own (see trusted_dir.hpp); even so, nothing here follows
// a symbolic link or truncates an existing file: the temporary is created
// exclusively, under a name unique to this process, relative to the open
// directory (the one held open since the start, held_dir.hpp, if it is), and the rename replaces a planted link instead of writing
// through it.
#pragma once

#include <string>

namespace gos {

// Throws std::runtime_error naming the path and the reason (e.g. ENOSPC);
// on failure the old file is left as it was and no temporary remains.
void write_file_atomically(const std::string &path, const std::string &content, unsigned mode = 0644);

// Removes the file, relative to its directory's held descriptor where it is
// held (held_dir.hpp); a file already gone is no error.
void remove_file(const std::string &path);

// Creates a directory and its parents; throws on failure.
void make_dirs(const std::string &path, unsigned mode = 0755);

} // namespace gos
