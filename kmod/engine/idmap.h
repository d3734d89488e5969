/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Hash map from non-zero 64-bit ids to objects: open addressing with
 * linear probing and backward-shift deletion, so no tombstones build up.
 */
#ifndef GOS_IDMAP_H
#define GOS_IDMAP_H

#include "gos_types.h"

struct gos_idmap_slot {
	u64 key;		/* 0 = empty */
	void *value;
};

struct gos_idmap {
	struct gos_idmap_slot *slots;
	u32 mask;		/* capacity - 1; capacity is a power of two */
	u32 count;
};

/* Makes room for one more insertion; call before changing other state. */
int gos_idmap_reserve(struct gos_idmap *map);
/* Caller has reserved room and the key is absent. */
void gos_idmap_put(struct gos_idmap *map, u64 key, void *value);
void *gos_idmap_get(const struct gos_idmap *map, u64 key);
void gos_idmap_del(struct gos_idmap *map, u64 key);
void gos_idmap_release(struct gos_idmap *map);

/* Visits every value; the callback must not change the map. */
void gos_idmap_each(const struct gos_idmap *map,
		    void (*fn)(void *value, void *ctx), void *ctx);

#endif /* GOS_IDMAP_H */
