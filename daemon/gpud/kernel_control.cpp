// The engine in gpuoversub.ko, driven through /dev/gpuoversub-control by
// the daemon's ioctls: GPUs, tenants, policies, bindings and statistics.
// The engine's clients are the agents' own files: there is no ClientCalls
// here.
#include <cerrno>
#include <algorithm>
#include <cstring>

#include "common/kdev/device.hpp"
#include "common/util/log.hpp"
#include "daemon/gpud/engine_backend.hpp"

namespace gos::gpud {
namespace {

class KernelControl final : public EngineControl {
public:
	explicit KernelControl(const std::string &device) : dev_(device) {}

	std::string name() const override { return "kernel"; }
	std::uint64_t chunk_size() const override { return dev_.chunk_size(); }
	std::uint64_t instance() const override { return dev_.instance(); }

	int gpu_add(std::uint32_t gpu, std::uint64_t physical, std::uint64_t reserve) override
	{
		gos_ioc_gpu g{gpu, 0, physical, reserve};
		int err = dev_.call(GOS_IOC_GPU_ADD, &g);
		if (err != -EEXIST)
			return err;
		// Added before a daemon restart: the module keeps its figures.
		gos_gpu_stats st{};
		if ((err = gpu_stats(gpu, st)))
			return err;
		if (st.physical != physical || st.reserve != reserve)
			GOS_LOG(log::warning, "engine: the module has GPU " << gpu << " with " << st.physical
					      << " bytes and a reserve of " << st.reserve << " from before; they stay "
					      << "until the module is reloaded");
		return 0;
	}
	int gpu_set_external(std::uint32_t gpu, std::uint64_t bytes) override
	{
		gos_ioc_gpu_external e{gpu, 0, bytes};
		return dev_.call(GOS_IOC_GPU_EXTERNAL, &e);
	}
	int gpu_stats(std::uint32_t gpu, gos_gpu_stats &out) override
	{
		gos_ioc_gpu_stats s{};
		s.gpu = gpu;
		if (int err = dev_.call(GOS_IOC_GPU_STATS, &s))
			return err;
		out = s.stats;
		return 0;
	}
	int tenant_create(std::uint32_t gpu, std::uint32_t weight, std::uint64_t limit, std::uint32_t &id) override
	{
		gos_ioc_tenant t{gpu, weight, limit, 0, 0};
		int err = dev_.call(GOS_IOC_TENANT_CREATE, &t);
		if (!err)
			id = t.tenant;
		return err;
	}
	int tenant_policy(std::uint32_t tenant, std::uint32_t weight, std::uint64_t limit, std::uint64_t min) override
	{
		gos_ioc_tenant_policy p{tenant, weight, limit, min};
		return dev_.call(GOS_IOC_TENANT_POLICY, &p);
	}
	int tenant_max_buffers(std::uint32_t tenant, std::uint32_t most) override
	{
		gos_ioc_tenant_buffers b{tenant, most, 0, 0};
		return dev_.call(GOS_IOC_TENANT_BUFFERS, &b);
	}
	int tenant_unmanaged(std::uint32_t tenant, std::uint64_t bytes) override
	{
		gos_ioc_tenant_unmanaged u{tenant, 0, bytes};
		return dev_.call(GOS_IOC_TENANT_UNMANAGED, &u);
	}
	int tenant_destroy(std::uint32_t tenant) override
	{
		gos_ioc_tenant_ref r{tenant, 0};
		return dev_.call(GOS_IOC_TENANT_DESTROY, &r);
	}
	int tenant_stats(std::uint32_t tenant, gos_tenant_stats &out) override
	{
		gos_ioc_tenant_stats s{};
		s.tenant = tenant;
		if (int err = dev_.call(GOS_IOC_TENANT_STATS, &s))
			return err;
		out = s.stats;
		return 0;
	}
	int tenant_list(std::vector<std::uint32_t> &out) override
	{
		// Tenants may come and go between the calls: ask until the room was enough.
		for (std::uint32_t room = 256;; room *= 2) {
			out.resize(room);
			gos_ioc_tenant_list l{room, 0, reinterpret_cast<std::uint64_t>(out.data())};
			if (int err = dev_.call(GOS_IOC_TENANT_LIST, &l))
				return err;
			if (l.count <= room || room >= GOS_TENANT_LIST_MAX) {
				out.resize(std::min(l.count, room));
				return 0;
			}
			room = std::min<std::uint32_t>(l.count, GOS_TENANT_LIST_MAX / 2);
		}
	}
	int bind(pid_t pid, std::uint64_t cgroup, const std::vector<std::uint32_t> &tenants) override
	{
		if (tenants.empty() || tenants.size() > GOS_MAX_STEP_GPUS)
			return -EINVAL;
		gos_ioc_bind b{};
		b.pid = static_cast<std::uint32_t>(pid);
		b.cgroup = cgroup;
		b.ntenants = static_cast<std::uint32_t>(tenants.size());
		std::memcpy(b.tenants, tenants.data(), tenants.size() * sizeof tenants[0]);
		return dev_.call(GOS_IOC_BIND, &b);
	}
	int unbind(pid_t pid, std::uint64_t cgroup) override
	{
		gos_ioc_bind b{};
		b.pid = static_cast<std::uint32_t>(pid);
		b.cgroup = cgroup;
		return dev_.call(GOS_IOC_UNBIND, &b);
	}

private:
	kdev::Device dev_;
};

} // namespace

std::unique_ptr<EngineControl> kernel_control(const std::string &device)
{
	return std::make_unique<KernelControl>(device);
}

} // namespace gos::gpud
