// SPDX-License-Identifier: GPL-2.0 OR MIT
/* The engine's OS layer for userspace: libc allocation, pthread mutex. */
#include <pthread.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

#include "../gos_os.h"

void *gos_os_zalloc(size_t bytes)
{
	return calloc(1, bytes ? bytes : 1);
}

void gos_os_free(void *ptr)
{
	free(ptr);
}

struct gos_os_lock {
	pthread_mutex_t mutex;
};

struct gos_os_lock *gos_os_lock_create(void)
{
	struct gos_os_lock *lock = gos_os_zalloc(sizeof(*lock));

	if (lock && pthread_mutex_init(&lock->mutex, NULL) != 0) {
		free(lock);
		return NULL;
	}
	return lock;
}

void gos_os_lock_destroy(struct gos_os_lock *lock)
{
	if (!lock)
		return;
	pthread_mutex_destroy(&lock->mutex);
	free(lock);
}

void gos_os_lock(struct gos_os_lock *lock)
{
	pthread_mutex_lock(&lock->mutex);
}

void gos_os_unlock(struct gos_os_lock *lock)
{
	pthread_mutex_unlock(&lock->mutex);
}

u64 gos_os_random_u64(void)
{
	u64 value = 0;

	/* Only seeds the engine's own generator, so a short read is harmless. */
	if (getrandom(&value, sizeof(value), 0) != sizeof(value))
		value = (u64)time(NULL) * 0x9e3779b97f4a7c15ULL;
	return value;
}

u64 gos_os_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
}
