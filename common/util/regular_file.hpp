// Reads a file the daemon trusts only if it is what it claims to be: a
// regular file (never a directory, a FIFO that would block, or a device
// such as /dev/zero that never ends) of a bounded size, and for the
// daemon's own records, no symbolic link and owned by the daemon's user.
// A file in a directory the daemon holds open (held_dir.hpp) is opened
// relative to that descriptor.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace gos {

class FileRefused : public std::runtime_error {
public:
	using std::runtime_error::runtime_error;
};

struct ReadRules {
	std::size_t max_bytes;
	bool own_record = false;	// no symbolic link; owned by our effective uid
};

// The file's content. Throws FileRefused with "PATH: reason" when the file
// cannot be opened or breaks a rule; the file is never read past the cap.
std::string read_regular_file(const std::string &path, const ReadRules &rules);

} // namespace gos
