// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Jobs of processes. The daemon binds a job's cgroup (Slurm puts every task
 * under .../job_N/, which a process cannot leave), or failing that the task
 * pids it registered, to the job's tenants, one per GPU; descendants
 * inherit either. A process never names its own tenant. A task binding
 * holds the task's struct pid, not its number: once the task exits, a
 * process that recycles the number is another struct pid, and not bound.
 */
#include <linux/cgroup.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "gpuoversub.h"

struct binding {
	struct rcu_head rcu;
	struct pid *task;	/* a task binding's process; NULL for a cgroup's */
	u32 ntenants;
	u32 tenants[GOS_MAX_STEP_GPUS];
};

static DEFINE_XARRAY(by_pid);		/* tgid -> struct binding */
static DEFINE_XARRAY(by_cgroup);	/* cgroup v2 id -> struct binding */

static struct xarray *table(const struct gos_ioc_bind *b, unsigned long *key)
{
	if (!!b->pid == !!b->cgroup || b->pid > PID_MAX_LIMIT)
		return NULL;
	*key = b->pid ? b->pid : b->cgroup;
	return b->pid ? &by_pid : &by_cgroup;
}

static void binding_free(struct binding *b)
{
	put_pid(b->task);
	kfree(b);
}

static void binding_free_rcu(struct rcu_head *head)
{
	binding_free(container_of(head, struct binding, rcu));
}

int gos_bind(const struct gos_ioc_bind *b)
{
	unsigned long key;
	struct xarray *xa = table(b, &key);
	struct binding *n, *old;

	if (!xa || !b->ntenants || b->ntenants > GOS_MAX_STEP_GPUS)
		return -EINVAL;
	n = kzalloc_obj(*n, GFP_KERNEL);
	if (!n)
		return -ENOMEM;
	if (b->pid) {
		/* The process that has the number now, in the daemon's namespace. */
		n->task = find_get_pid(b->pid);
		if (!n->task) {
			kfree(n);
			return -ESRCH;
		}
	}
	n->ntenants = b->ntenants;
	memcpy(n->tenants, b->tenants, sizeof(n->tenants));
	old = xa_store(xa, key, n, GFP_KERNEL);
	if (xa_is_err(old)) {
		binding_free(n);
		return xa_err(old);
	}
	if (old)
		call_rcu(&old->rcu, binding_free_rcu);
	return 0;
}

int gos_unbind(const struct gos_ioc_bind *b)
{
	unsigned long key;
	struct xarray *xa = table(b, &key);
	struct binding *old;

	if (!xa)
		return -EINVAL;
	old = xa_erase(xa, key);
	if (!old)
		return -ENOENT;
	call_rcu(&old->rcu, binding_free_rcu);
	return 0;
}

/* The binding of the calling process; under rcu_read_lock(). */
static struct binding *binding_of_current(void)
{
	struct task_struct *t;
	struct cgroup *cg;
	struct binding *b = NULL;

	for (cg = task_dfl_cgroup(current); cg && !b; cg = cgroup_parent(cg))
		b = xa_load(&by_cgroup, cgroup_id(cg));
	for (t = current->group_leader; !b && t->pid > 1;) {
		struct task_struct *parent = rcu_dereference(t->real_parent)->group_leader;

		b = xa_load(&by_pid, t->tgid);
		if (b && b->task != task_tgid(t))
			b = NULL;	/* the number of a bound task that exited */
		if (parent == t)
			break;
		t = parent;
	}
	return b;
}

int gos_tenant_of_current(u32 gpu, u32 *tenant)
{
	struct binding *b;
	int err = -EPERM;

	rcu_read_lock();
	b = binding_of_current();
	if (b && gpu >= b->ntenants) {
		err = -EINVAL;
	} else if (b) {
		*tenant = b->tenants[gpu];
		err = 0;
	}
	rcu_read_unlock();
	return err;
}

int gos_gpu_index_of_current(u32 tenant, u32 *gpu)
{
	struct binding *b;
	int err = -ENOENT;
	u32 i;

	rcu_read_lock();
	b = binding_of_current();
	for (i = 0; b && i < b->ntenants && err; i++) {
		if (b->tenants[i] == tenant) {
			*gpu = i;
			err = 0;
		}
	}
	rcu_read_unlock();
	return err;
}

static void empty(struct xarray *xa)
{
	struct binding *b;
	unsigned long key;

	xa_for_each(xa, key, b)
		binding_free(b);	/* at unload: no reader is left */
	xa_destroy(xa);
}

void gos_bindings_destroy(void)
{
	rcu_barrier();	/* bindings replaced or removed are freed by this module's callback */
	empty(&by_pid);
	empty(&by_cgroup);
}
