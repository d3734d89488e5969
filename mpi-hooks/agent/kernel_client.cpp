// EngineCalls for a node whose engine is gpuoversub.ko: allocations,
// frees, priorities, placements and acknowledgements are ioctls on the
// process's own /dev/gpuoversub file, and orders are read from it on a
// thread of the client's own. The daemon's calls stay with gpuoversubd
// (DaemonClient, which connects anew after a daemon restart), which this
// client asks only for the host node of each GPU.
#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "common/kdev/device.hpp"
#include "daemon_calls.hpp"
#include "engine_calls.hpp"

namespace gos::agent {
namespace {

thread_local std::string last_error;

int fail(int err, std::string why)
{
	last_error = std::move(why);
	return err;
}

class KernelClient final : public EngineCalls {
public:
	KernelClient(std::unique_ptr<kdev::Device> dev, std::shared_ptr<DaemonCalls> daemon, OrderHandler order)
		: dev_(std::move(dev)), daemon_(std::move(daemon)), on_order_(std::move(order))
	{
		stop_ = ::eventfd(0, EFD_CLOEXEC);
		if (stop_ < 0)
			throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
		reader_ = std::thread([this] { read_loop(); });
	}

	~KernelClient() override
	{
		std::uint64_t one = 1;
		while (::write(stop_, &one, sizeof one) < 0 && errno == EINTR) {
		}
		reader_.join();
		::close(stop_);
	}

	KernelClient(const KernelClient &) = delete;
	KernelClient &operator=(const KernelClient &) = delete;

	int alloc(const gos_req_alloc &req, gos_rep_alloc &rep) override
	{
		gos_ioc_alloc a{};
		a.gpu = req.gpu;
		a.priority = req.priority;
		a.flags = req.flags;
		a.size = req.size;
		if (int err = ioctl_call(GOS_IOC_ALLOC, &a, "allocation"))
			return err;
		rep = gos_rep_alloc{};
		rep.buffer = a.buffer;
		rep.device_bytes = a.device_bytes;
		rep.host_bytes = a.host_bytes;
		rep.waiting_bytes = a.waiting_bytes;
		rep.layout = a.layout;	// GOS_ALLOC_IN_ORDER from a module that lays buffers out in order
		rep.numa_node = numa_of(req.gpu);
		return 0;
	}
	int free(std::uint64_t buffer) override
	{
		gos_req_buffer req{buffer};
		return ioctl_call(GOS_IOC_FREE, &req, "free");
	}
	int set_priority(const gos_req_priority &req) override
	{
		gos_req_priority copy = req;
		return ioctl_call(GOS_IOC_PRIORITY, &copy, "priority");
	}
	int placement(std::uint64_t buffer, std::uint32_t first, std::uint32_t count,
		      std::vector<std::uint8_t> &states) override
	{
		states.assign(count, 0);
		gos_ioc_placement p{buffer, first, count, reinterpret_cast<std::uint64_t>(states.data())};
		return ioctl_call(GOS_IOC_PLACEMENT, &p, "placement");
	}
	std::vector<int> orders_done(const std::vector<gos_req_order_done> &acks) override
	{
		std::vector<int> results;
		for (const gos_req_order_done &a : acks) {
			gos_ioc_order o{a.order, a.ok, 0};
			results.push_back(ioctl_call(GOS_IOC_ORDER_DONE, &o, "order acknowledgement"));
		}
		return results;
	}
	std::string error() const override { return last_error; }
	// In a forked child, which has one thread: no lock (another thread of
	// the parent may have held one at the fork).
	void abandon() override
	{
		// The child's copies of the descriptors; the parent's stay open.
		dev_->abandon();
		::close(stop_);
		stop_ = -1;
	}

private:
	int ioctl_call(unsigned long cmd, void *arg, const char *what)
	{
		int err = -dev_->call(cmd, arg);
		if (!err)
			return 0;
		return fail(-err, std::string("/dev/gpuoversub: ") + what + ": " +
					  (err == EPERM ? "this process is not bound to a job (gpuoversubd binds "
							  "each task the SPANK plugin registers)"
						: err == EDQUOT ? "the job's GPU memory limit would be exceeded"
								: std::strerror(err)));
	}

	// The host node for a job GPU's evicted data: the module does not know
	// the host's topology, the daemon does. Asked once per GPU on the
	// allocating thread, again 10 s after a failure; the order reader only
	// looks it up, since an order must not wait for the daemon.
	int numa_of(std::uint32_t gpu)
	{
		{
			std::lock_guard g(numa_mu_);
			auto it = numa_.find(gpu);
			if (it != numa_.end() &&
			    (it->second.known || std::chrono::steady_clock::now() - it->second.asked < std::chrono::seconds(10)))
				return it->second.node;
		}
		gos_rep_meminfo info{};
		int err = daemon_->meminfo(gpu, info);
		int node = err ? -1 : info.numa_node;
		std::lock_guard g(numa_mu_);
		numa_[gpu] = {node, std::chrono::steady_clock::now(), err == 0};
		return node;
	}

	int known_numa(std::uint32_t gpu)
	{
		std::lock_guard g(numa_mu_);
		auto it = numa_.find(gpu);
		return it == numa_.end() ? -1 : it->second.node;
	}

	void read_loop()
	{
		gos_wire_order orders[64];
		while (dev_->wait_orders(stop_) > 0) {
			int got = dev_->read_orders(orders, std::size(orders));
			if (got == -EAGAIN)
				continue;
			if (got <= 0)
				return;
			for (int i = 0; i < got; i++) {
				if (orders[i].kind == GOS_ORDER_EVICT)
					orders[i].numa_node = known_numa(orders[i].gpu);
				on_order_(orders[i]);
			}
		}
	}

	std::unique_ptr<kdev::Device> dev_;
	int stop_ = -1;
	std::mutex numa_mu_;
	struct Numa {
		int node;
		std::chrono::steady_clock::time_point asked;
		bool known;
	};
	std::map<std::uint32_t, Numa> numa_;	// by job GPU
	std::shared_ptr<DaemonCalls> daemon_;
	OrderHandler on_order_;
	std::thread reader_;
};

} // namespace

std::unique_ptr<EngineCalls> attach_kernel(std::shared_ptr<DaemonCalls> daemon, std::uint64_t chunk_size,
					   EngineCalls::OrderHandler order)
{
	std::unique_ptr<kdev::Device> dev;
	try {
		dev = std::make_unique<kdev::Device>(kdev::default_path, O_NONBLOCK);
	} catch (const std::exception &e) {
		throw std::runtime_error(std::string("gpuoversubd's engine is gpuoversub.ko, but ") + e.what());
	}
	if (dev->chunk_size() != chunk_size)
		throw std::runtime_error(std::string(kdev::default_path) + " is not the module gpuoversubd uses (chunk " +
					 std::to_string(dev->chunk_size()) + " bytes, the daemon's " +
					 std::to_string(chunk_size) + ")");
	return std::make_unique<KernelClient>(std::move(dev), std::move(daemon), std::move(order));
}

} // namespace gos::agent
