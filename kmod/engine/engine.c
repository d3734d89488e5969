// SPDX-License-Identifier: GPL-2.0 OR MIT
/* The engine itself: its configuration, random source, creation, teardown and clock. */
#include "internal.h"

void gos_config_defaults(struct gos_config *cfg)
{
	*cfg = (struct gos_config){
		.chunk_size = GOS_CHUNK_DEFAULT,
		.fairness = GOS_FAIR_WEIGHTED,
		.victim = GOS_VICTIM_EXCESS,
		.select = GOS_SELECT_PRIORITY,
		.order_timeout_ns = 10ULL * 1000000000ULL,
		.throttle_persist_ns = 10ULL * 1000000000ULL,
		.return_batch_bytes = 256ULL << 20,
		.lend_backoff_ns = 1000000000ULL,
		.lend_backoff_max_ns = 30ULL * 1000000000ULL,
	};
}

u64 gos_rand(struct gos_engine *eng)
{
	/* xorshift64*: fast, and reproducible from a seed for replays. */
	eng->rng ^= eng->rng >> 12;
	eng->rng ^= eng->rng << 25;
	eng->rng ^= eng->rng >> 27;
	return eng->rng * 0x2545f4914f6cdd1dULL;
}

u32 gos_rand_below(struct gos_engine *eng, u32 bound)
{
	return (u32)(((gos_rand(eng) >> 32) * (u64)bound) >> 32);
}

static bool config_valid(const struct gos_config *cfg)
{
	return cfg->chunk_size >= GOS_CHUNK_MIN &&
	       cfg->chunk_size <= (1u << 30) && !(cfg->chunk_size % 4096) &&
	       cfg->fairness <= GOS_FAIR_STATIC &&
	       cfg->victim <= GOS_VICTIM_LRU &&
	       cfg->select <= GOS_SELECT_RANDOM && cfg->order_timeout_ns &&
	       cfg->lend_backoff_max_ns >= cfg->lend_backoff_ns;
}

int gos_engine_create(const struct gos_config *cfg, struct gos_engine **out)
{
	struct gos_engine *eng;

	if (!cfg || !out || !config_valid(cfg))
		return -EINVAL;
	eng = gos_os_zalloc(sizeof(*eng));
	if (!eng)
		return -ENOMEM;
	eng->lock = gos_os_lock_create();
	if (!eng->lock) {
		gos_os_free(eng);
		return -ENOMEM;
	}
	eng->cfg = *cfg;
	eng->rng = cfg->seed ? cfg->seed : gos_os_random_u64();
	if (!eng->rng)
		eng->rng = 0x9e3779b97f4a7c15ULL;
	gos_list_init(&eng->pending);
	*out = eng;
	return 0;
}

/* Takes any value of a map, to drain it while its entries delete themselves. */
static void *any_value(struct gos_idmap *map)
{
	u32 i;

	for (i = 0; map->count && i <= map->mask; i++)
		if (map->slots[i].key)
			return map->slots[i].value;
	return NULL;
}

void gos_engine_destroy(struct gos_engine *eng)
{
	void *obj;

	if (!eng)
		return;
	while ((obj = any_value(&eng->clients)))
		gos_client_release(eng, obj);
	while ((obj = any_value(&eng->tenants)))
		gos_tenant_release(eng, obj);
	while ((obj = any_value(&eng->gpus))) {
		gos_idmap_del(&eng->gpus, (u64)((struct gos_gpu *)obj)->id + 1);
		gos_gpu_release(obj);
	}
	gos_idmap_release(&eng->gpus);
	gos_idmap_release(&eng->tenants);
	gos_idmap_release(&eng->clients);
	gos_idmap_release(&eng->buffers);
	gos_idmap_release(&eng->orders);
	gos_vec_release(&eng->heap);
	gos_os_lock_destroy(eng->lock);
	gos_os_free(eng);
}

static void each_gpu_tick(void *gpu, void *eng)
{
	gos_gpu_tick(eng, gpu);
}

int gos_tick(struct gos_engine *eng)
{
	gos_os_lock(eng->lock);
	gos_orders_expire(eng);
	gos_idmap_each(&eng->gpus, each_gpu_tick, eng);
	gos_os_unlock(eng->lock);
	return 0;
}
