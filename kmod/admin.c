// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The daemon's ioctls: GPUs, tenants, bindings and statistics, on
 * /dev/gpuoversub-control only. Who may make them is who may open that
 * node for writing, as with /dev/kvm: its permissions (0600 root, as made
 * here; a udev rule may give it to another user), not a capability, so the
 * daemon needs none for them.
 */
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/uaccess.h>

#include "gpuoversub.h"

static int tenant_stats(struct gos_ioc_tenant_stats *out)
{
	if (out->pad)
		return -EINVAL;
	return gos_tenant_get_stats(gos_eng, out->tenant, &out->stats);
}

static int gpu_stats(struct gos_ioc_gpu_stats *out)
{
	if (out->pad)
		return -EINVAL;
	return gos_gpu_get_stats(gos_eng, out->gpu, &out->stats);
}

static int set_policy(const struct gos_ioc_tenant_policy *p)
{
	int err = gos_tenant_set_policy(gos_eng, p->tenant, p->weight, p->limit);

	return err ? err : gos_tenant_set_min(gos_eng, p->tenant, p->min_bytes);
}

static int tenant_list(struct gos_ioc_tenant_list *l)
{
	u32 *ids = NULL;
	int n;

	if (l->pad || l->count > GOS_TENANT_LIST_MAX)
		return -EINVAL;
	if (l->count) {
		ids = kvmalloc_array(l->count, sizeof(*ids), GFP_KERNEL);
		if (!ids)
			return -ENOMEM;
	}
	n = gos_tenant_list(gos_eng, ids, l->count);
	if (ids && copy_to_user(u64_to_user_ptr(l->ids), ids,
				min_t(u32, n, l->count) * sizeof(*ids)))
		n = -EFAULT;
	kvfree(ids);
	if (n < 0)
		return n;
	l->count = n;
	return 0;
}

/* Copies and checks its own struct: nothing unchecked reaches the engine. */
static int set_buffer_cap(void __user *arg)
{
	struct gos_ioc_tenant_buffers b;

	if (copy_from_user(&b, arg, sizeof(b)))
		return -EFAULT;
	if (b.flags || b.pad)
		return -EINVAL;
	return gos_tenant_set_max_buffers(gos_eng, b.tenant, b.max_buffers);
}

long gos_admin_ioctl(struct file *file, unsigned int cmd, void __user *arg, bool control)
{
	union {
		struct gos_ioc_gpu gpu;
		struct gos_ioc_tenant tenant;
		struct gos_ioc_bind bind;
		struct gos_ioc_tenant_policy policy;
		struct gos_ioc_tenant_ref ref;
		struct gos_ioc_tenant_stats tstats;
		struct gos_ioc_gpu_stats gstats;
		struct gos_ioc_gpu_external external;
		struct gos_ioc_tenant_unmanaged unmanaged;
		struct gos_ioc_tenant_list list;
	} a;
	int err;

	switch (cmd) {
	case GOS_IOC_GPU_ADD:
	case GOS_IOC_TENANT_CREATE:
	case GOS_IOC_BIND:
	case GOS_IOC_UNBIND:
	case GOS_IOC_TENANT_POLICY:
	case GOS_IOC_TENANT_DESTROY:
	case GOS_IOC_TENANT_STATS:
	case GOS_IOC_GPU_STATS:
	case GOS_IOC_GPU_EXTERNAL:
	case GOS_IOC_TENANT_LIST:
	case GOS_IOC_TENANT_BUFFERS:
	case GOS_IOC_TENANT_UNMANAGED:
		break;
	default:
		return -ENOTTY;
	}
	/* An agent's file may not; a control file opened read-only may not either. */
	if (!control)
		return -EPERM;
	if (!(file->f_mode & FMODE_WRITE))
		return -EBADF;
	if (cmd == GOS_IOC_TENANT_BUFFERS)
		return set_buffer_cap(arg);
	if (copy_from_user(&a, arg, _IOC_SIZE(cmd)))
		return -EFAULT;
	switch (cmd) {
	case GOS_IOC_GPU_ADD:
		return a.gpu.pad ? -EINVAL :
		       gos_gpu_add(gos_eng, a.gpu.gpu, a.gpu.physical, a.gpu.reserve);
	case GOS_IOC_TENANT_CREATE:
		if (a.tenant.pad || a.tenant.tenant)
			return -EINVAL;
		err = gos_tenant_create(gos_eng, a.tenant.gpu, a.tenant.weight, a.tenant.limit,
					&a.tenant.tenant);
		break;
	case GOS_IOC_BIND:
		return gos_bind(&a.bind);
	case GOS_IOC_UNBIND:
		return gos_unbind(&a.bind);
	case GOS_IOC_TENANT_POLICY:
		return set_policy(&a.policy);
	case GOS_IOC_TENANT_DESTROY:
		return a.ref.pad ? -EINVAL : gos_tenant_destroy(gos_eng, a.ref.tenant);
	case GOS_IOC_TENANT_STATS:
		err = tenant_stats(&a.tstats);
		break;
	case GOS_IOC_GPU_STATS:
		err = gpu_stats(&a.gstats);
		break;
	case GOS_IOC_TENANT_LIST:
		err = tenant_list(&a.list);
		break;
	case GOS_IOC_TENANT_UNMANAGED:
		return a.unmanaged.pad ? -EINVAL :
		       gos_tenant_set_unmanaged(gos_eng, a.unmanaged.tenant, a.unmanaged.bytes);
	default:	/* GOS_IOC_GPU_EXTERNAL */
		return a.external.pad ? -EINVAL :
		       gos_gpu_set_external(gos_eng, a.external.gpu, a.external.bytes);
	}
	if (err)
		return err;
	return copy_to_user(arg, &a, _IOC_SIZE(cmd)) ? -EFAULT : 0;
}
