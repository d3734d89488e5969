// SPDX-License-Identifier: GPL-2.0 OR MIT
#include "gos_os.h"
#include "idmap.h"

static u32 slot_of(const struct gos_idmap *map, u64 key)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (u32)key & map->mask;
}

static void insert(struct gos_idmap *map, u64 key, void *value)
{
	u32 i = slot_of(map, key);

	while (map->slots[i].key)
		i = (i + 1) & map->mask;
	map->slots[i].key = key;
	map->slots[i].value = value;
	map->count++;
}

int gos_idmap_reserve(struct gos_idmap *map)
{
	struct gos_idmap_slot *old = map->slots;
	u32 old_cap = map->slots ? map->mask + 1 : 0;
	u32 cap = old_cap ? old_cap * 2 : 16;
	u32 i;

	/* Keep the load at or below one half. */
	if (old_cap && (u64)(map->count + 1) * 2 <= old_cap)
		return 0;
	if (cap < old_cap)
		return -ENOMEM;
	map->slots = gos_os_zalloc((size_t)cap * sizeof(*map->slots));
	if (!map->slots) {
		map->slots = old;
		return -ENOMEM;
	}
	map->mask = cap - 1;
	map->count = 0;
	for (i = 0; i < old_cap; i++)
		if (old[i].key)
			insert(map, old[i].key, old[i].value);
	gos_os_free(old);
	return 0;
}

void gos_idmap_put(struct gos_idmap *map, u64 key, void *value)
{
	insert(map, key, value);
}

void *gos_idmap_get(const struct gos_idmap *map, u64 key)
{
	u32 i;

	if (!map->slots || !key)
		return NULL;
	for (i = slot_of(map, key); map->slots[i].key; i = (i + 1) & map->mask)
		if (map->slots[i].key == key)
			return map->slots[i].value;
	return NULL;
}

void gos_idmap_del(struct gos_idmap *map, u64 key)
{
	u32 hole, i, home;

	if (!map->slots || !key)
		return;
	for (hole = slot_of(map, key); map->slots[hole].key != key;
	     hole = (hole + 1) & map->mask)
		if (!map->slots[hole].key)
			return;
	map->slots[hole].key = 0;
	map->count--;
	/* Shift back later entries whose probe path crosses the hole. */
	for (i = (hole + 1) & map->mask; map->slots[i].key;
	     i = (i + 1) & map->mask) {
		home = slot_of(map, map->slots[i].key);
		if (((i - home) & map->mask) >= ((i - hole) & map->mask)) {
			map->slots[hole] = map->slots[i];
			map->slots[i].key = 0;
			hole = i;
		}
	}
}

void gos_idmap_release(struct gos_idmap *map)
{
	gos_os_free(map->slots);
	map->slots = NULL;
	map->mask = 0;
	map->count = 0;
}

void gos_idmap_each(const struct gos_idmap *map,
		    void (*fn)(void *value, void *ctx), void *ctx)
{
	u32 i;

	if (!map->slots)
		return;
	for (i = 0; i <= map->mask; i++)
		if (map->slots[i].key)
			fn(map->slots[i].value, ctx);
}
