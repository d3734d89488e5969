// SPDX-License-Identifier: GPL-2.0 OR MIT
/* The engine's OS layer in the kernel: kvzalloc, a mutex, the RNG, ktime. */
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "../../compat.h"
#include "../gos_os.h"

void *gos_os_zalloc(size_t bytes)
{
	return kvzalloc(bytes ? bytes : 1, GFP_KERNEL);
}

void gos_os_free(void *ptr)
{
	kvfree(ptr);
}

struct gos_os_lock {
	struct mutex mutex;	/* the whole engine: every entry point takes it */
};

struct gos_os_lock *gos_os_lock_create(void)
{
	struct gos_os_lock *lock = kzalloc_obj(*lock, GFP_KERNEL);

	if (lock)
		mutex_init(&lock->mutex);
	return lock;
}

void gos_os_lock_destroy(struct gos_os_lock *lock)
{
	if (!lock)
		return;
	mutex_destroy(&lock->mutex);
	kfree(lock);
}

void gos_os_lock(struct gos_os_lock *lock)
{
	mutex_lock(&lock->mutex);
}

void gos_os_unlock(struct gos_os_lock *lock)
{
	mutex_unlock(&lock->mutex);
}

u64 gos_os_random_u64(void)
{
	return get_random_u64();
}

u64 gos_os_now_ns(void)
{
	return ktime_get_ns();
}
