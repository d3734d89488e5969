/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* What the module's files share: the gos_eng, bindings, the daemon's ioctls. */
#ifndef GPUOVERSUB_KMOD_H
#define GPUOVERSUB_KMOD_H

#include "compat.h"
#include "engine/gos_engine.h"
#include "../include/gpuoversub/abi.h"

extern struct gos_engine *gos_eng;

/* bind.c: which job (tenants by GPU) a process belongs to, as the daemon said. */
int gos_bind(const struct gos_ioc_bind *b);
int gos_unbind(const struct gos_ioc_bind *b);
int gos_tenant_of_current(u32 gpu, u32 *tenant);	/* gpu: the job's index */
int gos_gpu_index_of_current(u32 tenant, u32 *gpu);	/* -ENOENT: not the job's */
void gos_bindings_destroy(void);

/*
 * admin.c: the daemon's ioctls, made on file; control: the file is
 * /dev/gpuoversub-control (on an agent's file they are -EPERM). -ENOTTY
 * for any other command.
 */
long gos_admin_ioctl(struct file *file, unsigned int cmd, void __user *arg, bool control);

#endif
