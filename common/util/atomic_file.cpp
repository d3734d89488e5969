#include "common/util/atomic_file.hpp"

#include "common/util/held_dir.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace gos {
namespace {

[[noreturn]] void fail(const std::string &what, const std::string &path, int err)
{
	throw std::runtime_error(what + " " + path + ": " + std::strerror(err));
}

// Closes a descriptor on scope exit.
struct Fd {
	int fd;
	~Fd()
	{
		if (fd >= 0)
			::close(fd);
	}
};

// ".NAME.PID.N.tmp": unique to this process and call, so a temporary a
// killed run left behind is never reused, and hidden from the daemon's
// scans of job-*.json.
std::string temporary_name(const std::string &name)
{
	static std::atomic<unsigned> serial{0};
	return "." + name + "." + std::to_string(::getpid()) + "." + std::to_string(serial++) + ".tmp";
}

void write_all(int fd, const std::string &content, const std::string &path)
{
	std::size_t off = 0;
	while (off < content.size()) {
		ssize_t n = ::write(fd, content.data() + off, content.size() - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			fail("cannot write", path, errno);
		off += static_cast<std::size_t>(n);
	}
}

} // namespace

void write_file_atomically(const std::string &path, const std::string &content, unsigned mode)
{
	std::size_t slash = path.find_last_of('/');
	std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
	std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
	if (name.empty())
		fail("cannot write", path, EISDIR);
	int held = held_directory(dir);
	Fd dfd{held >= 0 ? ::fcntl(held, F_DUPFD_CLOEXEC, 0) : ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
	if (dfd.fd < 0)
		fail("cannot open the directory", dir, errno);
	std::string tmp = temporary_name(name);
	Fd fd{::openat(dfd.fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)};
	if (fd.fd < 0)
		fail("cannot create a temporary for", path, errno);
	try {
		// The mode asked for, whatever the umask.
		if (::fchmod(fd.fd, mode) != 0)
			fail("cannot set the mode of", path, errno);
		write_all(fd.fd, content, path);
		if (::fsync(fd.fd) != 0)
			fail("cannot flush", path, errno);
		int closed = ::close(fd.fd);
		fd.fd = -1;
		if (closed != 0)
			fail("cannot flush", path, errno);
		if (::renameat(dfd.fd, tmp.c_str(), dfd.fd, name.c_str()) != 0)
			fail("cannot rename into place", path, errno);
	} catch (...) {
		::unlinkat(dfd.fd, tmp.c_str(), 0);
		throw;
	}
	::fsync(dfd.fd);
}

void remove_file(const std::string &path)
{
	std::size_t slash = path.find_last_of('/');
	std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
	if (int held = held_directory(dir); held >= 0)
		::unlinkat(held, path.substr(slash + 1).c_str(), 0);
	else
		::unlink(path.c_str());
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
