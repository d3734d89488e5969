// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Periodic work on one GPU: the throttle (PILOT's MAdvise), returns into
 * free memory (GPUswap thesis 5.3.5, weighted), and rebalancing, which
 * evicts from tenants above their share while a tenant below its share has
 * data in host RAM, so shares converge even without new allocations.
 */
#include "internal.h"

/* How far below what it may hold now a tenant is: see lend.c. */
static s64 deficit(const struct gos_tenant *t, u64 now)
{
	return (s64)gos_lend_ceiling(t, now) - (s64)(t->resident - t->evicting);
}

struct advice {
	struct gos_engine *eng;
	struct gos_message m;
};

static void advise_client(struct gos_client *cl, void *ctx)
{
	struct advice *a = ctx;

	gos_notice(a->eng, cl, &a->m);
}

static void advise(struct gos_engine *eng, struct gos_tenant *t)
{
	struct advice a = {
		.eng = eng,
		.m = {
			.kind = GOS_MSG_ADVICE,
			.tenant = t->id,
			.device_bytes = t->resident,
			.host_bytes = t->host,
			.entitlement = t->entitlement,
			.oversub_ns = gos_tenant_oversub_ns(eng, t),
		},
	};

	gos_tenant_each_client(eng, t, advise_client, &a);	/* one notice each */
}

/* A tenant demanding more than its share for `persist` is throttled. */
static void throttle_update(struct gos_engine *eng, struct gos_gpu *gpu)
{
	u64 persist = eng->cfg.throttle_persist_ns;
	u64 now = gos_now(eng);
	u32 i;

	if (!persist)
		return;
	gos_entitle(eng, gpu);
	for (i = 0; i < gpu->tenants.len; i++) {
		struct gos_tenant *t = gpu->tenants.v[i];

		if (t->demand <= t->entitlement) {
			t->over = false;
			t->throttled = false;
			continue;
		}
		if (!t->over) {
			t->over = true;
			t->over_since = now;
		}
		if (!t->throttled && now - t->over_since >= persist) {
			t->throttled = true;
			t->st.throttle_events++;
			advise(eng, t);
		}
	}
}

static s64 return_key(struct gos_engine *eng, const struct gos_tenant *t,
		      u64 now)
{
	if (eng->cfg.victim == GOS_VICTIM_EXCESS ||
	    eng->cfg.fairness == GOS_FAIR_STATIC)
		return deficit(t, now);
	return -(s64)(t->resident - t->evicting);
}

/*
 * Throttled tenants, everyone under static partitions, and borrowers in
 * their lending backoff stop at what deficit() measures from.
 */
static bool capped(struct gos_engine *eng, const struct gos_tenant *t,
		   u64 now)
{
	return t->throttled || eng->cfg.fairness == GOS_FAIR_STATIC ||
	       gos_lend_waiting(t, now);
}

void gos_plan_returns(struct gos_engine *eng, struct gos_gpu *gpu)
{
	u64 budget = eng->cfg.return_batch_bytes ?: ~0ULL;
	bool random = eng->cfg.select == GOS_SELECT_RANDOM;
	u64 now = gos_now(eng);
	struct gos_tenant *w;
	u32 i;

	if (eng->cfg.fairness == GOS_FAIR_FCFS)
		return;
	gos_settle(eng, gpu);
	if (gpu->waiting)
		return;
	gos_entitle(eng, gpu);
	gos_heap_init(&eng->heap);
	for (i = 0; i < gpu->tenants.len; i++) {
		struct gos_tenant *t = gpu->tenants.v[i];

		t->key = return_key(eng, t, now);
		if (t->hst.count)
			gos_heap_push(&eng->heap, t);
	}
	while ((w = gos_heap_top(&eng->heap))) {
		struct gos_chunk *c = gos_buckets_pick(eng, &w->hst, false,
						       random);
		u64 bytes = gos_chunk_size(eng, c);

		if (bytes > budget)
			break;
		/*
		 * Space too small for a tenant's chunk within its share is kept
		 * for it, not handed to tenants above their share: rebalancing
		 * frees the rest, and nothing ping-pongs.
		 */
		if (bytes > gos_free_now(gpu) && (s64)bytes <= deficit(w, now))
			break;
		if (bytes > gos_free_now(gpu) ||
		    (capped(eng, w, now) && (s64)bytes > deficit(w, now))) {
			gos_heap_pop(&eng->heap);
			continue;
		}
		if (c->buf->client->stalled) {
			gos_chunk_set_pin(eng, c, GOS_PIN_STALLED);
		} else {
			if (gos_order_add(eng, c, GOS_MSG_RETURN))
				break;
			gos_lend_returned(eng, w, now);
			budget -= bytes;
			w->key -= (s64)bytes;
		}
		if (w->hst.count)
			gos_heap_fix_top(&eng->heap);
		else
			gos_heap_pop(&eng->heap);
	}
}

/*
 * When no free memory is left for a tenant below its share that has host
 * data, evict what others hold above their share; the next planner run
 * returns the victim-freed space to the tenant furthest below.
 */
static void rebalance(struct gos_engine *eng, struct gos_gpu *gpu)
{
	u64 want = 0, budget = eng->cfg.return_batch_bytes ?: ~0ULL;
	/* Space already on its way back counts, or each tick would add more. */
	s64 coming = gos_coming_free(gpu);
	u64 now = gos_now(eng);
	u32 i;

	if (eng->cfg.fairness != GOS_FAIR_WEIGHTED ||
	    eng->cfg.victim != GOS_VICTIM_EXCESS || gpu->waiting)
		return;
	for (i = 0; i < gpu->tenants.len; i++) {
		struct gos_tenant *t = gpu->tenants.v[i];
		s64 d = deficit(t, now);

		if (t->hst.count && d >= (s64)eng->cfg.chunk_size)
			want += (u64)d < t->host ? (u64)d : t->host;
	}
	if ((s64)want <= coming)
		return;
	want -= (u64)(coming > 0 ? coming : 0);
	gos_reduce(eng, gpu, NULL, (s64)(want < budget ? want : budget), true);
}

void gos_gpu_tick(struct gos_engine *eng, struct gos_gpu *gpu)
{
	throttle_update(eng, gpu);
	gos_plan_returns(eng, gpu);
	rebalance(eng, gpu);
}
