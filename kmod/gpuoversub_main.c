// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * gpuoversub.ko: the eviction engine in the kernel, behind /dev/gpuoversub.
 *
 * One engine serves the node. Each open file is one engine client (one
 * agent process); closing it, kill -9 included, releases what it holds.
 * The daemon (CAP_SYS_ADMIN) declares GPUs and tenants and binds processes
 * to tenants; agents allocate, free, set priorities and acknowledge the
 * orders they read. A delayed work item runs the engine's periodic work.
 */
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "engine/gos_engine.h"
#include "../include/gpuoversub/abi.h"

static unsigned int chunk_size = GOS_CHUNK_DEFAULT;
module_param(chunk_size, uint, 0444);
MODULE_PARM_DESC(chunk_size,
		 "Chunk size in bytes (multiple of 4096, at least 64 KiB; default 2 MiB)");

static unsigned int return_interval_ms = 50;
module_param(return_interval_ms, uint, 0444);
MODULE_PARM_DESC(return_interval_ms, "How often the return planner runs (default 50)");

static unsigned int select_random;
module_param(select_random, uint, 0444);
MODULE_PARM_DESC(select_random, "1: evict random chunks; 0: lowest priority first (default)");

static unsigned int order_timeout_ms = 300;
module_param(order_timeout_ms, uint, 0444);
MODULE_PARM_DESC(order_timeout_ms, "Orders not acknowledged by then fail (default 300)");

static struct gos_engine *engine;
static DECLARE_WAIT_QUEUE_HEAD(readers);	/* woken whenever orders may be waiting */
static struct delayed_work ticker;

/* tgid -> tenant + 1, set by the daemon. */
static DEFINE_XARRAY(bindings);

struct gos_file {
	u32 client;
	struct gos_message pending;	/* read from the engine, not yet copied out */
	bool has_pending;
	struct mutex lock;		/* serializes read() on one file */
};

/* The tenant bound to the calling process or its nearest bound ancestor. */
static int tenant_of_current(u32 *tenant)
{
	struct task_struct *t;
	int found = -EPERM;

	rcu_read_lock();
	for (t = current->group_leader; t->pid > 1;) {
		struct task_struct *parent = rcu_dereference(t->real_parent)->group_leader;
		void *v = xa_load(&bindings, t->tgid);

		if (v) {
			*tenant = xa_to_value(v) - 1;
			found = 0;
			break;
		}
		if (parent == t)
			break;
		t = parent;
	}
	rcu_read_unlock();
	return found;
}

static int gos_open(struct inode *inode, struct file *file)
{
	struct gos_file *f = kzalloc(sizeof(*f), GFP_KERNEL);
	int err;

	if (!f)
		return -ENOMEM;
	err = gos_client_create(engine, &f->client);
	if (err) {
		kfree(f);
		return err;
	}
	mutex_init(&f->lock);
	file->private_data = f;
	return nonseekable_open(inode, file);
}

static int gos_release(struct inode *inode, struct file *file)
{
	struct gos_file *f = file->private_data;

	gos_client_exit(engine, f->client);
	mutex_destroy(&f->lock);
	kfree(f);
	wake_up_interruptible(&readers);	/* returns for whoever was squeezed */
	return 0;
}

/* Fills f->pending from the engine if empty; true if a message waits. */
static bool next_message(struct gos_file *f)
{
	if (!f->has_pending)
		f->has_pending = gos_read_messages(engine, f->client, &f->pending, 1) == 1;
	return f->has_pending;
}

static ssize_t gos_read(struct file *file, char __user *buf, size_t len, loff_t *off)
{
	struct gos_file *f = file->private_data;
	struct gos_tenant_stats ts;
	size_t done = 0;
	int err = 0;

	if (len < sizeof(struct gos_wire_order))
		return -EINVAL;
	if (mutex_lock_interruptible(&f->lock))
		return -ERESTARTSYS;
	while (done + sizeof(struct gos_wire_order) <= len) {
		struct gos_wire_order o = {};

		if (!next_message(f)) {
			if (done || (file->f_flags & O_NONBLOCK)) {
				err = done ? 0 : -EAGAIN;
				break;
			}
			mutex_unlock(&f->lock);
			err = wait_event_interruptible(readers, next_message(f));
			if (err)
				return -ERESTARTSYS;
			if (mutex_lock_interruptible(&f->lock))
				return -ERESTARTSYS;
			continue;
		}
		o.id = f->pending.id;
		o.kind = f->pending.kind;
		o.gpu = gos_tenant_get_stats(engine, f->pending.tenant, &ts) ? 0 : ts.gpu;
		o.buffer = f->pending.buffer;
		o.offset = f->pending.offset;
		o.length = f->pending.length;
		o.device_bytes = f->pending.device_bytes;
		o.host_bytes = f->pending.host_bytes;
		o.entitlement = f->pending.entitlement;
		o.numa_node = -1;
		if (copy_to_user(buf + done, &o, sizeof(o))) {
			err = -EFAULT;
			break;
		}
		f->has_pending = false;
		done += sizeof(o);
	}
	mutex_unlock(&f->lock);
	return done ? done : err;
}

static __poll_t gos_poll(struct file *file, poll_table *wait)
{
	struct gos_file *f = file->private_data;
	__poll_t mask = 0;

	poll_wait(file, &readers, wait);
	mutex_lock(&f->lock);
	if (next_message(f))
		mask = EPOLLIN | EPOLLRDNORM;
	mutex_unlock(&f->lock);
	return mask;
}

static long admin_ioctl(unsigned int cmd, void __user *arg)
{
	union {
		struct gos_ioc_gpu gpu;
		struct gos_ioc_tenant tenant;
		struct gos_ioc_bind bind;
	} a;
	int err;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (copy_from_user(&a, arg, _IOC_SIZE(cmd)))
		return -EFAULT;
	switch (cmd) {
	case GOS_IOC_GPU_ADD:
		if (a.gpu.pad)
			return -EINVAL;
		return gos_gpu_add(engine, a.gpu.gpu, a.gpu.physical, a.gpu.reserve);
	case GOS_IOC_TENANT_CREATE:
		if (a.tenant.pad || a.tenant.tenant)
			return -EINVAL;
		err = gos_tenant_create(engine, a.tenant.gpu, a.tenant.weight, a.tenant.limit,
					&a.tenant.tenant);
		if (err)
			return err;
		return copy_to_user(arg, &a.tenant, sizeof(a.tenant)) ? -EFAULT : 0;
	case GOS_IOC_BIND:
		if (!a.bind.pid || a.bind.pid > PID_MAX_LIMIT)
			return -EINVAL;
		return xa_err(xa_store(&bindings, a.bind.pid,
				       xa_mk_value((unsigned long)a.bind.tenant + 1), GFP_KERNEL));
	}
	return -ENOTTY;
}

static long agent_ioctl(struct gos_file *f, unsigned int cmd, void __user *arg)
{
	union {
		struct gos_ioc_alloc alloc;
		struct gos_req_buffer buffer;
		struct gos_req_priority prio;
		struct gos_ioc_order order;
	} a;
	struct gos_alloc_result res;
	u32 tenant;
	int err;

	if (copy_from_user(&a, arg, _IOC_SIZE(cmd)))
		return -EFAULT;
	switch (cmd) {
	case GOS_IOC_ALLOC:
		if (a.alloc.flags & ~GOS_ALLOC_FLAG_UNEVICTABLE || a.alloc.buffer)
			return -EINVAL;
		err = tenant_of_current(&tenant);
		if (err)
			return err;
		err = gos_alloc(engine, f->client, tenant, a.alloc.size, a.alloc.priority,
				a.alloc.flags & GOS_ALLOC_FLAG_UNEVICTABLE ?
				GOS_ALLOC_UNEVICTABLE : 0, &res);
		wake_up_interruptible(&readers);	/* orders for the victims */
		if (err)
			return err;
		a.alloc.buffer = res.buffer;
		a.alloc.device_bytes = res.device_bytes;
		a.alloc.host_bytes = res.host_bytes;
		a.alloc.waiting_bytes = res.waiting_bytes;
		return copy_to_user(arg, &a.alloc, sizeof(a.alloc)) ? -EFAULT : 0;
	case GOS_IOC_FREE:
		err = gos_free(engine, f->client, a.buffer.buffer);
		break;
	case GOS_IOC_PRIORITY:
		if (a.prio.pad)
			return -EINVAL;
		err = gos_set_priority(engine, f->client, a.prio.buffer, a.prio.offset,
				       a.prio.length, a.prio.priority);
		break;
	case GOS_IOC_ORDER_DONE:
		if (a.order.pad || a.order.ok > 1)
			return -EINVAL;
		err = a.order.ok ? gos_order_ack(engine, f->client, a.order.order)
				 : gos_order_fail(engine, f->client, a.order.order);
		break;
	default:
		return -ENOTTY;
	}
	wake_up_interruptible(&readers);
	return err;
}

static long gos_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *p = (void __user *)arg;
	struct gos_ioc_version v = { GOS_KABI_VERSION, chunk_size };

	switch (cmd) {
	case GOS_IOC_VERSION:
		return copy_to_user(p, &v, sizeof(v)) ? -EFAULT : 0;
	case GOS_IOC_GPU_ADD:
	case GOS_IOC_TENANT_CREATE:
	case GOS_IOC_BIND:
		return admin_ioctl(cmd, p);
	case GOS_IOC_ALLOC:
	case GOS_IOC_FREE:
	case GOS_IOC_PRIORITY:
	case GOS_IOC_ORDER_DONE:
		return agent_ioctl(file->private_data, cmd, p);
	}
	return -ENOTTY;
}

static const struct file_operations gos_fops = {
	.owner = THIS_MODULE,
	.open = gos_open,
	.release = gos_release,
	.read = gos_read,
	.poll = gos_poll,
	.unlocked_ioctl = gos_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = no_llseek,
};

static struct miscdevice gos_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "gpuoversub",
	.fops = &gos_fops,
	.mode = 0666,
};

static void tick(struct work_struct *work)
{
	gos_tick(engine);
	wake_up_interruptible(&readers);
	schedule_delayed_work(&ticker, msecs_to_jiffies(return_interval_ms));
}

static int __init gos_init(void)
{
	struct gos_config cfg;
	int err;

	gos_config_defaults(&cfg);
	cfg.chunk_size = chunk_size;
	cfg.select = select_random ? GOS_SELECT_RANDOM : GOS_SELECT_PRIORITY;
	cfg.order_timeout_ns = (u64)order_timeout_ms * NSEC_PER_MSEC;
	if (!return_interval_ms || !order_timeout_ms)
		return -EINVAL;
	err = gos_engine_create(&cfg, &engine);
	if (err)
		return err;
	err = misc_register(&gos_dev);
	if (err) {
		gos_engine_destroy(engine);
		return err;
	}
	INIT_DELAYED_WORK(&ticker, tick);
	schedule_delayed_work(&ticker, msecs_to_jiffies(return_interval_ms));
	pr_info("gpuoversub: engine ABI %d, chunk %u bytes, returns every %u ms\n",
		GOS_KABI_VERSION, chunk_size, return_interval_ms);
	return 0;
}

static void __exit gos_exit(void)
{
	cancel_delayed_work_sync(&ticker);
	misc_deregister(&gos_dev);
	xa_destroy(&bindings);
	gos_engine_destroy(engine);
}

module_init(gos_init);
module_exit(gos_exit);
MODULE_LICENSE("Dual MIT/GPL");
MODULE_DESCRIPTION("gpuoversub: fair GPU-memory oversubscription, the eviction engine");
