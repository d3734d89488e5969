// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Entitlements: weighted max-min water-filling, or static partitions; and
 * each tenant's share, its weighted part of the capacity whatever others
 * demand, or its minimum if more, beyond which it only borrows.
 */
#include "internal.h"

#define UNSETTLED (~0ULL)

/*
 * Each round settles every tenant whose demand fits under the current water
 * level (remaining bytes per unit of weight). Settling only raises the level,
 * so when a round settles nobody, the rest share what is left by weight.
 * Rounds are few in practice and the cost is O(tenants * rounds), paid once
 * per decision, never per chunk.
 */
void gos_waterfill(u32 n, const u64 *demand, const u32 *weight, u64 cap,
		   u64 *share)
{
	u64 left = cap < GOS_BYTES_MAX ? cap : GOS_BYTES_MAX;
	u64 wsum = 0;
	bool progress = true;
	u32 i;

	for (i = 0; i < n; i++) {
		share[i] = UNSETTLED;
		wsum += weight[i];
	}
	while (wsum && progress) {
		progress = false;
		for (i = 0; i < n; i++) {
			u64 d = demand[i] < GOS_BYTES_MAX ? demand[i]
							  : GOS_BYTES_MAX;

			if (share[i] != UNSETTLED || !weight[i])
				continue;
			/* d / w <= left / wsum, without division */
			if ((__uint128_t)d * wsum > (__uint128_t)left * weight[i])
				continue;
			share[i] = d;
			left -= d;
			wsum -= weight[i];
			progress = true;
		}
	}
	for (i = 0; i < n; i++)
		if (share[i] == UNSETTLED)
			share[i] = wsum ? left * weight[i] / wsum : 0;
}

/*
 * x * num / den for byte counts below 2^48 without 128-bit division, which
 * the kernel lacks: in 64 KiB units when the product could overflow.
 */
static u64 scale(u64 x, u64 num, u64 den)
{
	if (x < (1ULL << 32) && num < (1ULL << 32))
		return x * num / den;
	if (den >> 16 == 0)
		return x;
	return ((x >> 16) * (num >> 16) / (den >> 16)) << 16;
}

/*
 * Minimum shares come first: each tenant is guaranteed min(demand, min),
 * scaled down together if admins promised more than the GPU has; the rest
 * is water-filled over what demand remains.
 */
static u64 guarantee(struct gos_gpu *gpu, u64 cap)
{
	u64 promised = 0, given = 0;
	u32 i, n = gpu->tenants.len;

	for (i = 0; i < n; i++) {
		struct gos_tenant *t = gpu->tenants.v[i];

		gpu->wf_min[i] = t->demand < t->min_bytes ? t->demand
							  : t->min_bytes;
		promised += gpu->wf_min[i];
	}
	for (i = 0; i < n; i++) {
		if (promised > cap)
			gpu->wf_min[i] = scale(gpu->wf_min[i], cap, promised);
		gpu->wf_demand[i] -= gpu->wf_min[i];
		given += gpu->wf_min[i];
	}
	return given;
}

void gos_entitle(struct gos_engine *eng, struct gos_gpu *gpu)
{
	u64 cap = gos_capacity(gpu);
	u64 wsum = 0;
	u32 i, n = gpu->tenants.len;

	if (!gpu->entitlement_dirty)
		return;
	gpu->entitlement_dirty = false;
	for (i = 0; i < n; i++) {
		struct gos_tenant *t = gpu->tenants.v[i];

		gpu->wf_demand[i] = t->demand;
		gpu->wf_weight[i] = t->weight;
		wsum += t->weight;
	}
	for (i = 0; i < n; i++) {
		struct gos_tenant *t = gpu->tenants.v[i];

		t->share = cap / wsum * t->weight;
		if (t->share < t->min_bytes)
			t->share = t->min_bytes;
	}
	if (eng->cfg.fairness == GOS_FAIR_STATIC) {
		for (i = 0; i < n; i++)
			gpu->wf_share[i] = cap * gpu->wf_weight[i] / wsum;
	} else {
		cap -= guarantee(gpu, cap);
		gos_waterfill(n, gpu->wf_demand, gpu->wf_weight, cap,
			      gpu->wf_share);
		for (i = 0; i < n; i++)
			gpu->wf_share[i] += gpu->wf_min[i];
	}
	for (i = 0; i < n; i++)
		((struct gos_tenant *)gpu->tenants.v[i])->entitlement =
			gpu->wf_share[i];
}
