// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * One use of a freshly loaded gpuoversub.ko, for the guest's load/unload
 * cycles: a GPU, a tenant, this process bound to it, three allocations
 * that overcommit it, and an exit that leaves the release to the kernel.
 * Exit 0 on success.
 */
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <gpuoversub/abi.h>

int main(void)
{
	struct gos_ioc_gpu g = { .gpu = 0, .physical = 64 << 20 };
	struct gos_ioc_tenant t = { .gpu = 0, .weight = 1 };
	int control = open("/dev/gpuoversub-control", O_RDWR), fd = open("/dev/gpuoversub", O_RDWR);

	if (fd < 0 || control < 0 || ioctl(control, GOS_IOC_GPU_ADD, &g) || ioctl(control, GOS_IOC_TENANT_CREATE, &t))
		return 1;
	struct gos_ioc_bind b = { .pid = (__u32)getpid(), .ntenants = 1, .tenants = { t.tenant } };

	if (ioctl(control, GOS_IOC_BIND, &b))
		return 2;
	for (int i = 0; i < 3; i++) {
		struct gos_ioc_alloc a = { .priority = 8, .size = 40 << 20 };

		if (ioctl(fd, GOS_IOC_ALLOC, &a))
			return 3;
	}
	return 0;	/* closing the agent file frees all three */
}
