// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Per-priority buckets of one tenant's selectable chunks. Picking the lowest
 * (or highest) non-empty bucket is one bit scan; picking inside a bucket and
 * removing is O(1) by swapping with the last slot.
 */
#include "internal.h"

/*
 * Sizes both buckets of a priority for every chunk the tenant could hold at
 * it, so moving chunks between device and host never needs memory.
 */
int gos_tenant_reserve_prio(struct gos_tenant *t, u32 prio, u32 extra)
{
	u64 total = (u64)t->nprio[prio] + extra;
	int err = gos_vec_reserve_total(&t->dev.b[prio], total);

	if (!err)
		err = gos_vec_reserve_total(&t->hst.b[prio], total);
	return err;
}

void gos_buckets_add(struct gos_buckets *bk, struct gos_chunk *c)
{
	struct gos_vec *v = &bk->b[c->prio];

	c->pos = v->len;
	gos_vec_push(v, c);
	bk->mask |= 1u << c->prio;
	bk->count++;
}

void gos_buckets_del(struct gos_buckets *bk, struct gos_chunk *c)
{
	struct gos_vec *v = &bk->b[c->prio];
	struct gos_chunk *last = v->v[--v->len];

	v->v[c->pos] = last;
	last->pos = c->pos;
	if (!v->len)
		bk->mask &= ~(1u << c->prio);
	bk->count--;
}

static u32 lowest_bit(u32 mask)
{
	return (u32)__builtin_ctz(mask);
}

static u32 highest_bit(u32 mask)
{
	return 31u - (u32)__builtin_clz(mask);
}

struct gos_chunk *gos_buckets_pick(struct gos_engine *eng,
				   struct gos_buckets *bk, bool lowest,
				   bool random)
{
	struct gos_vec *v;
	u32 p, r;

	if (!bk->count)
		return NULL;
	if (random) {
		/* Uniform over all chunks: walk the bucket sizes. */
		r = gos_rand_below(eng, bk->count);
		for (p = 0; r >= bk->b[p].len; p++)
			r -= bk->b[p].len;
		return bk->b[p].v[r];
	}
	p = lowest ? lowest_bit(bk->mask) : highest_bit(bk->mask);
	v = &bk->b[p];
	return v->v[gos_rand_below(eng, v->len)];
}

void gos_buckets_release(struct gos_buckets *bk)
{
	u32 p;

	for (p = 0; p < GOS_NPRIO; p++)
		gos_vec_release(&bk->b[p]);
	bk->mask = 0;
	bk->count = 0;
}
