#include "common/util/regular_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/util/held_dir.hpp"
#include "common/util/units.hpp"

namespace gos {
namespace {

[[noreturn]] void refuse(const std::string &path, const std::string &why)
{
	throw FileRefused(path + ": " + why);
}

std::string kind_of(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return "a device";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a regular file";
}

} // namespace

std::string read_regular_file(const std::string &path, const ReadRules &rules)
{
	// O_NONBLOCK: opening a FIFO must not wait for a writer.
	int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | (rules.own_record ? O_NOFOLLOW : 0);
	int fd = open_in_held(path, flags);
	if (fd < 0) {
		int err = errno;
		refuse(path, err == ELOOP && rules.own_record ? "is a symbolic link, not a record the daemon wrote"
							      : "cannot open: " + std::string(std::strerror(err)));
	}
	struct Closer {
		int fd;
		~Closer() { ::close(fd); }
	} closer{fd};
	struct stat st;
	if (::fstat(fd, &st) != 0)
		refuse(path, "cannot stat: " + std::string(std::strerror(errno)));
	if (!S_ISREG(st.st_mode))
		refuse(path, "is " + kind_of(st.st_mode) + "; a regular file is needed");
	if (rules.own_record && st.st_uid != ::geteuid())
		refuse(path, "is owned by uid " + std::to_string(st.st_uid) + ", not by the daemon's uid " +
				     std::to_string(::geteuid()) + "; not a record the daemon wrote");
	if (static_cast<std::uint64_t>(st.st_size) > rules.max_bytes)
		refuse(path, "is " + std::to_string(st.st_size) + " bytes, more than the limit of " + format_bytes(rules.max_bytes));
	std::string text;
	char buf[65536];
	for (;;) {
		ssize_t n = ::read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			refuse(path, "cannot read: " + std::string(std::strerror(errno)));
		if (n == 0)
			return text;
		text.append(buf, static_cast<std::size_t>(n));
		// A file that grows while read is held to the same cap.
		if (text.size() > rules.max_bytes)
			refuse(path, "grew past the limit of " + format_bytes(rules.max_bytes) + " while read");
	}
}

} // namespace gos
