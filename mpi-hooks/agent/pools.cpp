#include "pools.hpp"

#include "driver.hpp"

namespace gos::agent {

void PoolBook::made(CUmemoryPool pool, const CUmemPoolProps &props)
{
	bool replaceable = props.location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
			   props.handleTypes == CU_MEM_HANDLE_TYPE_NONE;
	std::lock_guard g(mu_);
	pools_[pool] = Facts{props.location.id, replaceable};
}

bool PoolBook::replaceable(CUmemoryPool pool, CUdevice dev) const
{
	{
		std::lock_guard g(mu_);
		auto it = pools_.find(pool);
		if (it != pools_.end())
			return it->second.replaceable && it->second.dev == dev;
	}
	// Not made by the application: a default pool, or one the agent never saw.
	CUmemoryPool dflt = nullptr;
	const Driver &d = driver();
	return d.cuDeviceGetDefaultMemPool && d.cuDeviceGetDefaultMemPool(&dflt, dev) == CUDA_SUCCESS && dflt == pool;
}

} // namespace gos::agent
