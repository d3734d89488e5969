/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What differs between the kernels the module builds against (Debian 12's
 * 6.1, Debian 13's 6.12, testing's 7.2), in this one header.
 */
#ifndef GPUOVERSUB_KMOD_COMPAT_H
#define GPUOVERSUB_KMOD_COMPAT_H

#include <linux/slab.h>

/*
 * kzalloc_obj(), Linux 7.0's typed allocation, which checkpatch from 7.0
 * prefers over kzalloc(sizeof(...)). Stable kernels got it too (Debian's
 * 6.12.117 has it), so test the macro, not the version. Callers pass the
 * GFP flags, which this stand-in requires.
 */
#ifndef kzalloc_obj
#define kzalloc_obj(obj, gfp) ({ typeof(obj) *__p = kzalloc(sizeof(obj), gfp); __p; })
#endif

#endif
