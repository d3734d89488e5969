# SPDX-License-Identifier: GPL-2.0 OR MIT
# The engine's portable C, one list for both builds: the module's (kmod/Kbuild,
# with engine/kernel/os_kernel.c) and the userspace library's (engine.mk, with
# engine/user/os_user.c). Names are relative to kmod/engine.
GOS_ENGINE_SOURCES := alloc.c buckets.c buffer.c check.c chunk.c client.c engine.c entitle.c \
	gpu.c heap.c idmap.c lend.c orders.c reduce.c returns.c tenant.c vec.c waitq.c wire.c
