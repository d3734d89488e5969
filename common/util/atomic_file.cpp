#include "common/util/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace gos {
namespace {

[[noreturn]] void fail(const std::string &what, const std::string &path, int err)
{
	throw std::runtime_error(what + " " + path + ": " + std::strerror(err));
}

} // namespace

void write_file_atomically(const std::string &path, const std::string &content, unsigned mode)
{
	std::string tmp = path + ".tmp";
	int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		fail("cannot create", tmp, errno);
	std::size_t off = 0;
	while (off < content.size()) {
		ssize_t n = ::write(fd, content.data() + off, content.size() - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;
			::close(fd);
			::unlink(tmp.c_str());
			fail("cannot write", tmp, err);
		}
		off += static_cast<std::size_t>(n);
	}
	if (::fsync(fd) != 0 || ::close(fd) != 0) {
		int err = errno;
		::unlink(tmp.c_str());
		fail("cannot flush", tmp, err);
	}
	if (::rename(tmp.c_str(), path.c_str()) != 0) {
		int err = errno;
		::unlink(tmp.c_str());
		fail("cannot rename into place", path, err);
	}
	std::string dir = path.substr(0, path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/'));
	int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		::fsync(dfd);
		::close(dfd);
	}
}

void make_dirs(const std::string &path, unsigned mode)
{
	for (std::size_t pos = 1; pos <= path.size(); pos++) {
		if (pos != path.size() && path[pos] != '/')
			continue;
		std::string part = path.substr(0, pos);
		if (::mkdir(part.c_str(), mode) != 0 && errno != EEXIST)
			fail("cannot create directory", part, errno);
	}
	struct stat st;
	if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
		fail("not a directory:", path, ENOTDIR);
}

} // namespace gos
