#include "common/kdev/device.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace gos::kdev {

Device::Device(const std::string &path, int flags)
{
	fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC | flags);
	if (fd_ < 0) {
		int err = errno;
		throw std::runtime_error(path + ": " + std::strerror(err) +
					 (err == ENOENT	  ? " (is gpuoversub.ko loaded?)"
					  : err == EACCES ? " (its permissions say who may: see gpuoversub(4))"
							  : ""));
	}
	std::string why;
	if (call(GOS_IOC_VERSION, &version_) != 0)
		why = path + " does not answer the version ioctl: not gpuoversub.ko's device";
	else if (version_.abi != GOS_KABI_VERSION)
		why = path + " speaks kernel ABI " + std::to_string(version_.abi) + ", this program " +
		      std::to_string(GOS_KABI_VERSION) + ": install matching versions";
	if (!why.empty()) {
		::close(fd_);
		throw std::runtime_error(why);
	}
}

Device::~Device()
{
	if (fd_ >= 0)
		::close(fd_);
}

int Device::call(unsigned long cmd, void *arg)
{
	for (;;) {
		if (::ioctl(fd_, cmd, arg) == 0)
			return 0;
		if (errno != EINTR)
			return -errno;
	}
}

int Device::wait_orders(int stop)
{
	for (;;) {
		pollfd p[2] = {{fd_, POLLIN, 0}, {stop, POLLIN, 0}};
		if (::poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (p[1].revents)
			return 0;
		if (p[0].revents & (POLLERR | POLLNVAL))
			return -EIO;
		return 1;
	}
}

int Device::read_orders(gos_wire_order *out, std::size_t max)
{
	for (;;) {
		ssize_t got = ::read(fd_, out, max * sizeof *out);
		if (got >= 0)
			return static_cast<int>(static_cast<std::size_t>(got) / sizeof *out);
		if (errno != EINTR)
			return -errno;
	}
}

void Device::abandon()
{
	::close(fd_);
	fd_ = -1;
}

} // namespace gos::kdev
