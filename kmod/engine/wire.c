// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The engine's messages as the orders agents read, from the module's
 * device and from the daemon's socket alike (gos_wire_order).
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
