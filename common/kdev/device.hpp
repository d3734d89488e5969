// gpuoversub.ko's engine behind ioctls: /dev/gpuoversub for the agent
// (allocations, orders) and /dev/gpuoversub-control for the daemon (GPUs,
// tenants, bindings, statistics). Opened close-on-exec, its ABI checked,
// every call retried on EINTR.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <gpuoversub/abi.h>

namespace gos::kdev {

inline constexpr const char *default_path = "/dev/gpuoversub";
inline constexpr const char *control_path = "/dev/gpuoversub-control";

class Device {
public:
	// Opens path read-write plus flags (O_NONBLOCK, say) and checks that
	// the version ioctl answers with this build's GOS_KABI_VERSION;
	// throws std::runtime_error saying what is wrong and what to do.
	explicit Device(const std::string &path = default_path, int flags = 0);
	~Device();
	Device(const Device &) = delete;
	Device &operator=(const Device &) = delete;

	std::uint32_t chunk_size() const { return version_.chunk_size; }
	// Random per module load: tenant ids of another load mean nothing.
	std::uint64_t instance() const { return version_.instance; }

	// 0 or -errno.
	int call(unsigned long cmd, void *arg);
	// Waits until an order can be read (1) or stop, another descriptor,
	// is readable (0); -errno if the device fails.
	int wait_orders(int stop);
	// Reads up to max whole orders: how many, or -errno (-EAGAIN: none
	// waiting on a non-blocking file).
	int read_orders(gos_wire_order *out, std::size_t max);
	// Closes the descriptor without a call: a forked child's copy of it.
	void abandon();

private:
	int fd_ = -1;
	gos_ioc_version version_{};
};

} // namespace gos::kdev
