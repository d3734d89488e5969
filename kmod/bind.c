// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Tenants of processes. The daemon binds a job's cgroup (Slurm puts every
 * task under .../job_N/, which a process cannot leave), or failing that the
 * task pids it registered; descendants inherit either. A process never
 * names its own tenant.
 */
#include <linux/cgroup.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/xarray.h>

#include "gpuoversub.h"

static DEFINE_XARRAY(by_pid);		/* tgid -> tenant + 1 */
static DEFINE_XARRAY(by_cgroup);	/* cgroup v2 id -> tenant + 1 */

static int one_key(const struct gos_ioc_bind *b)
{
	if (!!b->pid == !!b->cgroup || b->pid > PID_MAX_LIMIT)
		return -EINVAL;
	return 0;
}

int gos_bind(const struct gos_ioc_bind *b)
{
	void *v = xa_mk_value((unsigned long)b->tenant + 1);
	int err = one_key(b);

	if (err)
		return err;
	if (b->pid)
		return xa_err(xa_store(&by_pid, b->pid, v, GFP_KERNEL));
	return xa_err(xa_store(&by_cgroup, b->cgroup, v, GFP_KERNEL));
}

int gos_unbind(const struct gos_ioc_bind *b)
{
	int err = one_key(b);

	if (err)
		return err;
	if (!(b->pid ? xa_erase(&by_pid, b->pid) : xa_erase(&by_cgroup, b->cgroup)))
		return -ENOENT;
	return 0;
}

static int found(void *v, u32 *tenant)
{
	*tenant = xa_to_value(v) - 1;
	return 0;
}

int gos_tenant_of_current(u32 *tenant)
{
	struct task_struct *t;
	struct cgroup *cg;
	int err = -EPERM;

	rcu_read_lock();
	for (cg = task_dfl_cgroup(current); cg && err; cg = cgroup_parent(cg)) {
		void *v = xa_load(&by_cgroup, cgroup_id(cg));

		if (v)
			err = found(v, tenant);
	}
	for (t = current->group_leader; err && t->pid > 1;) {
		struct task_struct *parent = rcu_dereference(t->real_parent)->group_leader;
		void *v = xa_load(&by_pid, t->tgid);

		if (v)
			err = found(v, tenant);
		if (parent == t)
			break;
		t = parent;
	}
	rcu_read_unlock();
	return err;
}

void gos_bindings_destroy(void)
{
	xa_destroy(&by_pid);
	xa_destroy(&by_cgroup);
}
