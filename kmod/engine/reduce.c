// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The reducer (GPUswap thesis 5.3.4, with weighted entitlements): until
 * enough memory is covered, pick the victim tenant with the largest key,
 * take one chunk from it, and pick again. The incoming buffer counts toward
 * its own tenant, so a huge allocation is charged to whoever makes it; its
 * chunks that are chosen go straight to the host with no copy, the last
 * ones first, so that the allocation's reply says which (alloc.c).
 */
#include "internal.h"

static s64 effective_resident(const struct gos_tenant *t,
			      const struct gos_unplaced *unplaced)
{
	s64 eff = (s64)(t->resident - t->evicting);

	if (unplaced && unplaced->buf->tenant == t)
		eff += (s64)unplaced->bytes;
	return eff;
}

static bool unplaced_of(const struct gos_unplaced *unplaced,
			const struct gos_tenant *t)
{
	return unplaced && unplaced->buf->tenant == t && unplaced->n;
}

static bool has_candidates(const struct gos_tenant *t,
			   const struct gos_unplaced *unplaced)
{
	return t->dev.count || unplaced_of(unplaced, t);
}

static void build_heap(struct gos_engine *eng, struct gos_gpu *gpu,
		       const struct gos_unplaced *unplaced)
{
	u32 i;

	gos_entitle(eng, gpu);
	gos_heap_init(&eng->heap);
	for (i = 0; i < gpu->tenants.len; i++) {
		struct gos_tenant *t = gpu->tenants.v[i];

		t->key = effective_resident(t, unplaced);
		if (eng->cfg.victim == GOS_VICTIM_EXCESS)
			t->key -= (s64)t->entitlement;
		if (has_candidates(t, unplaced))
			gos_heap_push(&eng->heap, t);
	}
}

/* Should the victim give a chunk of the incoming buffer, or an old one? */
static bool take_from_unplaced(struct gos_engine *eng, struct gos_tenant *v,
			       const struct gos_unplaced *unplaced)
{
	u32 prio, lowest, rivals;

	if (!unplaced_of(unplaced, v))
		return false;
	if (!v->dev.count)
		return true;
	if (eng->cfg.select == GOS_SELECT_RANDOM) {
		rivals = v->dev.count;
	} else {
		prio = unplaced->buf->chunks[0].prio;
		lowest = (u32)__builtin_ctz(v->dev.mask);
		if (prio != lowest)
			return prio < lowest;
		rivals = v->dev.b[prio].len;
	}
	return gos_rand_below(eng, unplaced->n + rivals) < unplaced->n;
}

/* The last of the new buffer's unplaced chunks goes. */
static u64 unplaced_to_host(struct gos_engine *eng,
			    struct gos_unplaced *unplaced)
{
	struct gos_chunk *c = &unplaced->buf->chunks[--unplaced->n];
	u64 bytes = gos_chunk_size(eng, c);

	unplaced->bytes -= bytes;
	gos_chunk_set(eng, c, GOS_CHUNK_HOST);
	c->buf->tenant->st.bytes_host_placed += bytes;
	return bytes;
}

/* The tenant whose allocation the reducer makes room for; NULL for none. */
static struct gos_tenant *claimant(const struct gos_unplaced *unplaced)
{
	return unplaced ? unplaced->buf->tenant : NULL;
}

/* Returns the bytes now gone or on their way out, or -ENOMEM. */
static s64 evict(struct gos_engine *eng, struct gos_chunk *c,
		 const struct gos_unplaced *unplaced)
{
	int err;

	/* Making room for its own allocation revokes no loan. */
	if (c->buf->tenant != claimant(unplaced))
		gos_lend_revoked(eng, c->buf->tenant);
	/*
	 * A client that let an order expire is not asked: the room is taken,
	 * and it reads so when it runs again (without memory for that, it
	 * learns at its next late answer).
	 */
	if (c->buf->client->stalled) {
		gos_chunk_forfeit(eng, c);
		gos_order_forfeited(eng, c);
		return (s64)gos_chunk_size(eng, c);
	}
	err = gos_order_add(eng, c, GOS_MSG_EVICT);
	return err ? err : (s64)gos_chunk_size(eng, c);
}

static void reduce_lru(struct gos_engine *eng, struct gos_gpu *gpu,
		       struct gos_unplaced *unplaced, s64 need)
{
	s64 moved;

	while (need > 0) {
		if (!gos_list_empty(&gpu->lru))
			moved = evict(eng, gos_list_first(&gpu->lru,
							  struct gos_chunk,
							  lru), unplaced);
		else if (unplaced && unplaced->n)
			moved = (s64)unplaced_to_host(eng, unplaced);
		else
			return;
		if (moved < 0)
			return;
		need -= moved;
	}
}

void gos_reduce(struct gos_engine *eng, struct gos_gpu *gpu,
		struct gos_unplaced *unplaced, s64 need, bool only_excess)
{
	bool random = eng->cfg.select == GOS_SELECT_RANDOM;
	struct gos_tenant *v;
	s64 moved;

	if (eng->cfg.victim == GOS_VICTIM_LRU && !only_excess) {
		reduce_lru(eng, gpu, unplaced, need);
		return;
	}
	build_heap(eng, gpu, unplaced);
	while (need > 0 && (v = gos_heap_top(&eng->heap))) {
		/* Rebalancing takes only what a tenant holds beyond its share. */
		if (only_excess && v->key < (s64)eng->cfg.chunk_size)
			break;
		if (take_from_unplaced(eng, v, unplaced))
			moved = (s64)unplaced_to_host(eng, unplaced);
		else
			moved = evict(eng, gos_buckets_pick(eng, &v->dev, true,
							    random), unplaced);
		if (moved < 0)
			break;
		need -= moved;
		v->key -= moved;
		if (has_candidates(v, unplaced))
			gos_heap_fix_top(&eng->heap);
		else
			gos_heap_pop(&eng->heap);
	}
}

/* Memory used outside the engine, or failed orders, may leave it over. */
void gos_fit_capacity(struct gos_engine *eng, struct gos_gpu *gpu)
{
	s64 need = (s64)(gpu->used - gpu->evicting) -
		   (s64)gos_capacity(gpu);

	if (need > 0)
		gos_reduce(eng, gpu, NULL, need, false);
}
