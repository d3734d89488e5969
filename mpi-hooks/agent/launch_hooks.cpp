// Kernel launches pass straight through; the agent only counts them, and
// its thread reports the count as the job's activity (ACTIVITY), which the
// daemon's balloon uses to tell busy jobs from idle ones.
#include "agent.hpp"
#include "driver.hpp"

#define LAUNCH(symbol, ...)                                                                     \
	do {                                                                                    \
		if (gos::agent::driver().symbol)                                                \
			gos::agent::Agent::count_launch();                                      \
		return gos::agent::call_driver(&gos::agent::Driver::symbol, __VA_ARGS__);       \
	} while (0)

GOS_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,
				   unsigned int block_x, unsigned int block_y, unsigned int block_z,
				   unsigned int shared_bytes, CUstream stream, void **params, void **extra)
{
	LAUNCH(cuLaunchKernel, f, grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes, stream, params,
	       extra);
}

GOS_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,
					unsigned int block_x, unsigned int block_y, unsigned int block_z,
					unsigned int shared_bytes, CUstream stream, void **params, void **extra)
{
	LAUNCH(cuLaunchKernel_ptsz, f, grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes, stream,
	       params, extra);
}

GOS_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **params, void **extra)
{
	LAUNCH(cuLaunchKernelEx, config, f, params, extra);
}

GOS_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **params, void **extra)
{
	LAUNCH(cuLaunchKernelEx_ptsz, config, f, params, extra);
}
