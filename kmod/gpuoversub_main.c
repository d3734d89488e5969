// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * gpuoversub.ko: the eviction engine in the kernel, behind two nodes.
 *
 * One engine serves the node. Each open file of /dev/gpuoversub is one
 * engine client (one agent process); closing it, kill -9 included,
 * releases what it holds. Agents allocate, free, set priorities and
 * acknowledge the orders they read. Through /dev/gpuoversub-control, whose
 * permissions say who may (admin.c), the daemon declares GPUs and tenants
 * and binds processes to tenants. A delayed work item runs the engine's
 * periodic work.
 */
#include <linux/atomic.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/random.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "gpuoversub.h"

/* Tells a restarted daemon whether its saved tenant ids are this load's. */
static u64 instance;

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

static unsigned int lend_backoff_ms = 1000;
module_param(lend_backoff_ms, uint, 0444);
MODULE_PARM_DESC(lend_backoff_ms,
		 "Wait after a loan beyond a job's share is revoked at once; 0 = lend again at once (default 1000)");

static unsigned int lend_backoff_max_ms = 30000;
module_param(lend_backoff_max_ms, uint, 0444);
MODULE_PARM_DESC(lend_backoff_max_ms, "The most that wait doubles to (default 30000)");

struct gos_engine *gos_eng;	/* the one engine of the node */
static DECLARE_WAIT_QUEUE_HEAD(readers);	/* woken whenever orders may be waiting */
static atomic_t kicks = ATOMIC_INIT(0);		/* counts those wake-ups */

/*
 * Orders may be waiting for someone. Readers sleep until the count moves,
 * not on the engine itself: a wait condition must not take a mutex.
 */
static void kick(void)
{
	atomic_inc(&kicks);
	wake_up_interruptible(&readers);
}

static struct delayed_work ticker;

struct gos_file {
	u32 client;
	struct gos_message pending;	/* read from the engine, not yet copied out */
	bool has_pending;
	struct mutex lock;		/* serializes read() on one file */
};

static int gos_open(struct inode *inode, struct file *file)
{
	struct gos_file *f = kzalloc_obj(*f, GFP_KERNEL);
	int err;

	if (!f)
		return -ENOMEM;
	err = gos_client_create(gos_eng, &f->client);
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

	gos_client_exit(gos_eng, f->client);
	mutex_destroy(&f->lock);
	kfree(f);
	kick();	/* returns for whoever was squeezed */
	return 0;
}

/* Fills f->pending from the engine if empty; true if a message waits. */
static bool next_message(struct gos_file *f)
{
	if (!f->has_pending)
		f->has_pending = gos_read_messages(gos_eng, f->client, &f->pending, 1) == 1;
	return f->has_pending;
}

static ssize_t gos_read(struct file *file, char __user *buf, size_t len, loff_t *off)
{
	struct gos_file *f = file->private_data;
	size_t done = 0;
	int err = 0;

	if (len < sizeof(struct gos_wire_order))
		return -EINVAL;
	if (mutex_lock_interruptible(&f->lock))
		return -ERESTARTSYS;
	/* The agent reads its orders itself: it runs, so it is heard. */
	gos_client_heard(gos_eng, f->client);
	while (done + sizeof(struct gos_wire_order) <= len) {
		struct gos_wire_order o;
		u32 gpu;
		int seen = atomic_read(&kicks);	/* before looking: no wake-up is missed */

		if (!next_message(f)) {
			if (done || (file->f_flags & O_NONBLOCK)) {
				err = done ? 0 : -EAGAIN;
				break;
			}
			mutex_unlock(&f->lock);
			if (wait_event_interruptible(readers, atomic_read(&kicks) != seen))
				return -ERESTARTSYS;
			if (mutex_lock_interruptible(&f->lock))
				return -ERESTARTSYS;
			continue;
		}
		/* A tenant no longer bound (its job ended) keeps index 0. */
		if (gos_gpu_index_of_current(f->pending.tenant, &gpu))
			gpu = 0;
		gos_order_of_message(&f->pending, gpu, &o);
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

static long placement(u32 client, const struct gos_ioc_placement *p)
{
	u8 *states;
	int err;

	if (!p->count || p->count > GOS_PLACEMENT_MAX)
		return -EINVAL;
	states = kvmalloc(p->count, GFP_KERNEL);
	if (!states)
		return -ENOMEM;
	err = gos_buffer_placement(gos_eng, client, p->buffer, p->first, p->count, states);
	if (!err && copy_to_user(u64_to_user_ptr(p->states), states, p->count))
		err = -EFAULT;
	kvfree(states);
	return err;
}

static long agent_ioctl(struct gos_file *f, unsigned int cmd, void __user *arg)
{
	union {
		struct gos_ioc_alloc alloc;
		struct gos_req_buffer buffer;
		struct gos_req_priority prio;
		struct gos_ioc_order order;
		struct gos_ioc_placement place;
	} a;
	struct gos_alloc_result res;
	u32 tenant, flags;
	int err;

	if (copy_from_user(&a, arg, _IOC_SIZE(cmd)))
		return -EFAULT;
	switch (cmd) {
	case GOS_IOC_ALLOC:
		if (gos_alloc_flags_of_wire(a.alloc.flags, &flags) || a.alloc.buffer ||
		    a.alloc.layout)
			return -EINVAL;
		err = gos_tenant_of_current(a.alloc.gpu, &tenant);
		if (err)
			return err;
		err = gos_alloc(gos_eng, f->client, tenant, a.alloc.size, a.alloc.priority,
				flags, &res);
		kick();	/* orders for the victims */
		if (err)
			return err;
		a.alloc.buffer = res.buffer;
		a.alloc.device_bytes = res.device_bytes;
		a.alloc.host_bytes = res.host_bytes;
		a.alloc.waiting_bytes = res.waiting_bytes;
		/* the engine's layout: no placement to ask */
		a.alloc.layout = GOS_ALLOC_IN_ORDER;
		return copy_to_user(arg, &a.alloc, sizeof(a.alloc)) ? -EFAULT : 0;
	case GOS_IOC_FREE:
		err = gos_free(gos_eng, f->client, a.buffer.buffer);
		break;
	case GOS_IOC_PRIORITY:
		if (a.prio.pad)
			return -EINVAL;
		err = gos_set_priority(gos_eng, f->client, a.prio.buffer, a.prio.offset,
				       a.prio.length, a.prio.priority);
		break;
	case GOS_IOC_ORDER_DONE:
		if (a.order.pad || a.order.ok > 1)
			return -EINVAL;
		err = a.order.ok ? gos_order_ack(gos_eng, f->client, a.order.order)
				 : gos_order_fail(gos_eng, f->client, a.order.order);
		break;
	case GOS_IOC_PLACEMENT:
		return placement(f->client, &a.place);
	default:
		return -ENOTTY;
	}
	kick();
	return err;
}

/* Both nodes answer it: each side checks it speaks this module's ABI. */
static long version(void __user *p)
{
	struct gos_ioc_version v = { GOS_KABI_VERSION, chunk_size, instance };

	return copy_to_user(p, &v, sizeof(v)) ? -EFAULT : 0;
}

static long gos_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *p = (void __user *)arg;

	switch (cmd) {
	case GOS_IOC_VERSION:
		return version(p);
	case GOS_IOC_ALLOC:
	case GOS_IOC_FREE:
	case GOS_IOC_PRIORITY:
	case GOS_IOC_ORDER_DONE:
	case GOS_IOC_PLACEMENT:
		return agent_ioctl(file->private_data, cmd, p);
	}
	return gos_admin_ioctl(file, cmd, p, false);
}

static long gos_control_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *p = (void __user *)arg;

	return cmd == GOS_IOC_VERSION ? version(p) : gos_admin_ioctl(file, cmd, p, true);
}

static const struct file_operations gos_fops = {
	.owner = THIS_MODULE,
	.open = gos_open,
	.release = gos_release,
	.read = gos_read,
	.poll = gos_poll,
	.unlocked_ioctl = gos_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	/* No .llseek: since 6.0 that alone makes the file unseekable (-ESPIPE),
	 * and 6.12 removed no_llseek.
	 */
};

static struct miscdevice gos_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "gpuoversub",
	.fops = &gos_fops,
	.mode = 0666,
};

/* The daemon's file: no engine client, no orders to read. */
static const struct file_operations gos_control_fops = {
	.owner = THIS_MODULE,
	.open = nonseekable_open,
	.unlocked_ioctl = gos_control_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice gos_control_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "gpuoversub-control",
	.fops = &gos_control_fops,
	.mode = 0600,
};

static void tick(struct work_struct *work)
{
	gos_tick(gos_eng);
	kick();
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
	cfg.lend_backoff_ns = (u64)lend_backoff_ms * NSEC_PER_MSEC;
	cfg.lend_backoff_max_ns = (u64)lend_backoff_max_ms * NSEC_PER_MSEC;
	if (!return_interval_ms || !order_timeout_ms)
		return -EINVAL;
	if (lend_backoff_max_ms < lend_backoff_ms) {
		pr_err("gpuoversub: lend_backoff_max_ms must not be below lend_backoff_ms\n");
		return -EINVAL;
	}
	err = gos_engine_create(&cfg, &gos_eng);
	if (err)
		return err;
	instance = get_random_u64() | 1;	/* never 0, which means "none" to the daemon */
	/* The agents' node last: once it is there, a file may hold the engine. */
	err = misc_register(&gos_control_dev);
	if (err)
		goto destroy;
	err = misc_register(&gos_dev);
	if (err) {
		misc_deregister(&gos_control_dev);
		goto destroy;
	}
	INIT_DELAYED_WORK(&ticker, tick);
	schedule_delayed_work(&ticker, msecs_to_jiffies(return_interval_ms));
	pr_info("gpuoversub: engine ABI %d, chunk %u bytes, returns every %u ms\n",
		GOS_KABI_VERSION, chunk_size, return_interval_ms);
	return 0;
destroy:
	gos_engine_destroy(gos_eng);
	return err;
}

static void __exit gos_exit(void)
{
	cancel_delayed_work_sync(&ticker);
	misc_deregister(&gos_dev);
	misc_deregister(&gos_control_dev);
	gos_bindings_destroy();
	gos_engine_destroy(gos_eng);
}

module_init(gos_init);
module_exit(gos_exit);
MODULE_LICENSE("Dual MIT/GPL");
MODULE_DESCRIPTION("gpuoversub: fair GPU-memory oversubscription, the eviction engine");
