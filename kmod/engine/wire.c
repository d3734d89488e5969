// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The engine's messages as the orders agents read, from the module's
 * device and from the daemon's socket alike (gos_wire_order), and their
 * allocation flags as the engine's.
 */
#include "gos_engine.h"

/* Mirrored enums: the wire passes the engine's codes on as they are. */
#define SAME_CODE(a, b) ((int)(a) == (int)(b))
/* An order's kind is its message's (gos_order_of_message). */
static_assert(SAME_CODE(GOS_ORDER_EVICT, GOS_MSG_EVICT) &&
	      SAME_CODE(GOS_ORDER_RETURN, GOS_MSG_RETURN) &&
	      SAME_CODE(GOS_ORDER_SETTLED, GOS_MSG_SETTLED) &&
	      SAME_CODE(GOS_ORDER_ADVICE, GOS_MSG_ADVICE),
	      "enum gos_order_kind (abi.h) must match enum gos_msg_kind");
/* The module and the daemon send gos_buffer_placement's chunk states as GOS_PLACE_*. */
static_assert(SAME_CODE(GOS_PLACE_DEVICE, GOS_CHUNK_DEVICE) &&
	      SAME_CODE(GOS_PLACE_HOST, GOS_CHUNK_HOST) &&
	      SAME_CODE(GOS_PLACE_EVICTING, GOS_CHUNK_EVICTING) &&
	      SAME_CODE(GOS_PLACE_RETURNING, GOS_CHUNK_RETURNING) &&
	      SAME_CODE(GOS_PLACE_WAITING, GOS_CHUNK_WAITING),
	      "enum gos_place (abi.h) must match enum gos_chunk_state");

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
