/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The engine's whole view of its operating system: memory, one lock,
 * randomness and a clock. The kernel module and the userspace library each
 * implement these few functions; nothing else in the engine is OS-specific.
 */
#ifndef GOS_OS_H
#define GOS_OS_H

#include "gos_types.h"

/* Zeroed memory; may be large (chunk tables), so kernels use kvzalloc. */
void *gos_os_zalloc(size_t bytes);
void gos_os_free(void *ptr);

struct gos_os_lock;
struct gos_os_lock *gos_os_lock_create(void);
void gos_os_lock_destroy(struct gos_os_lock *lock);
void gos_os_lock(struct gos_os_lock *lock);
void gos_os_unlock(struct gos_os_lock *lock);

u64 gos_os_random_u64(void);
/* Monotonic nanoseconds. */
u64 gos_os_now_ns(void);

#endif /* GOS_OS_H */
