// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The engine's messages as the orders agents read, from the module's
 * device and from the daemon's socket alike (gos_wire_order), and their
 * allocation flags as the engine's.
 */
#include "gos_engine.h"

void gos_order_of_message(const struct gos_message *m, u32 gpu,
			  struct gos_wire_order *o)
{
	*o = (struct gos_wire_order){
		.id = m->id,
		.kind = m->kind,
		.gpu = gpu,
		.buffer = m->buffer,
		.offset = m->offset,
		.length = m->length,
		.device_bytes = m->device_bytes,
		.host_bytes = m->host_bytes,
		.entitlement = m->entitlement,
		.oversub_ns = m->oversub_ns,
		.numa_node = -1,
	};
}

int gos_alloc_flags_of_wire(u32 wire, u32 *flags)
{
	if (wire & ~GOS_ALLOC_FLAGS_KNOWN)
		return -EINVAL;
	*flags = (wire & GOS_ALLOC_FLAG_UNEVICTABLE ? GOS_ALLOC_UNEVICTABLE : 0) |
		 (wire & GOS_ALLOC_FLAG_AGAIN ? GOS_ALLOC_AGAIN : 0);
	return 0;
}
