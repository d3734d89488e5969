#include "common/util/held_dir.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>

namespace gos {
namespace {

std::mutex mu;
std::map<std::string, int> held;	// by the path as configured

// DIR's canonical path opened component by component, O_NOFOLLOW each.
int open_without_links(const std::string &dir)
{
	char real[PATH_MAX];
	if (!::realpath(dir.c_str(), real))
		throw std::runtime_error("cannot hold the directory " + dir + ": " + std::strerror(errno));
	int fd = ::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	std::string path(real);
	for (std::size_t start = 1; fd >= 0 && start < path.size();) {
		std::size_t end = path.find('/', start);
		if (end == std::string::npos)
			end = path.size();
		std::string part = path.substr(start, end - start);
		int next = ::openat(fd, part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int err = errno;
		::close(fd);
		if (next < 0)
			throw std::runtime_error("cannot hold the directory " + dir + ": " + path.substr(0, end) + ": " +
						 (err == ELOOP || err == ENOTDIR ? "not a directory but a link or a file"
										  : std::strerror(err)));
		fd = next;
		start = end + 1;
	}
	if (fd < 0)
		throw std::runtime_error("cannot hold the directory " + dir + ": /: " + std::strerror(errno));
	return fd;
}

} // namespace

void hold_directory(const std::string &dir)
{
	int fd = open_without_links(dir);
	std::lock_guard lock(mu);
	auto [it, fresh] = held.emplace(dir, fd);
	if (!fresh) {
		::close(it->second);
		it->second = fd;
	}
}

int held_directory(const std::string &dir)
{
	std::lock_guard lock(mu);
	auto it = held.find(dir);
	return it == held.end() ? -1 : it->second;
}

int open_in_held(const std::string &path, int flags, unsigned mode)
{
	std::size_t slash = path.find_last_of('/');
	if (slash != std::string::npos && slash != 0)
		if (int dir = held_directory(path.substr(0, slash)); dir >= 0)
			return ::openat(dir, path.c_str() + slash + 1, flags, mode);
	return ::open(path.c_str(), flags, mode);
}

} // namespace gos
