/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Fixed-width types for the engine, which is compiled both into the kernel
 * module and into a userspace library. Only freestanding headers are used
 * outside the kernel, and <assert.h> for its static_assert, a macro, so the
 * core never depends on libc.
 */
#ifndef GOS_TYPES_H
#define GOS_TYPES_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/errno.h>
#include <linux/build_bug.h>
#else
#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
/* The compiler's own fixed-width types, the same that <stdint.h> names. */
typedef __UINT8_TYPE__ u8;
typedef __UINT16_TYPE__ u16;
typedef __UINT32_TYPE__ u32;
typedef __UINT64_TYPE__ u64;
typedef __INT32_TYPE__ s32;
typedef __INT64_TYPE__ s64;

/* Linux errno values, so both builds report identical codes. */
#define EPERM 1
#define ENOENT 2
#define ENOMEM 12
#define EBUSY 16
#define EEXIST 17
#define EINVAL 22
#define EFBIG 27
#define ENOSPC 28
#define ERANGE 34
#define ENOBUFS 105
#define EDQUOT 122
#endif

#endif /* GOS_TYPES_H */
