// SPDX-License-Identifier: GPL-2.0 OR MIT
/* GPUs: their capacity, the memory others use on them, and what a change in either sets off. */
#include "internal.h"

struct gos_gpu *gos_gpu_get(struct gos_engine *eng, u32 id)
{
	return gos_idmap_get(&eng->gpus, (u64)id + 1);
}

void gos_gpu_release(struct gos_gpu *gpu)
{
	gos_vec_release(&gpu->tenants);
	gos_os_free(gpu->wf_demand);
	gos_os_free(gpu->wf_share);
	gos_os_free(gpu->wf_min);
	gos_os_free(gpu->wf_weight);
	gos_os_free(gpu);
}

int gos_gpu_add(struct gos_engine *eng, u32 id, u64 physical, u64 reserve)
{
	struct gos_gpu *gpu;
	int err = -EINVAL;

	if (!physical || physical >= GOS_BYTES_MAX || reserve > physical)
		return -EINVAL;
	gos_os_lock(eng->lock);
	if (id == ~0u)
		goto out;
	err = -EEXIST;
	if (gos_gpu_get(eng, id))
		goto out;
	err = gos_idmap_reserve(&eng->gpus);
	if (err)
		goto out;
	err = -ENOMEM;
	gpu = gos_os_zalloc(sizeof(*gpu));
	if (!gpu)
		goto out;
	gpu->id = id;
	gpu->physical = physical;
	gpu->reserve = reserve;
	gos_list_init(&gpu->waitq);
	gos_list_init(&gpu->lru);
	gos_idmap_put(&eng->gpus, (u64)id + 1, gpu);
	err = 0;
out:
	gos_os_unlock(eng->lock);
	return err;
}

/* After memory appears: place waiting chunks, then plan returns. */
void gos_gpu_after_free(struct gos_engine *eng, struct gos_gpu *gpu)
{
	gos_settle(eng, gpu);
	gos_plan_returns(eng, gpu);
}

/* After memory disappears: evict to fit, then drop uncoverable waits. */
void gos_gpu_after_shrink(struct gos_engine *eng, struct gos_gpu *gpu)
{
	gos_fit_capacity(eng, gpu);
	gos_trim_waiting(eng, gpu);
}

int gos_gpu_set_external(struct gos_engine *eng, u32 id, u64 bytes)
{
	struct gos_gpu *gpu;
	u64 old;

	gos_os_lock(eng->lock);
	gpu = gos_gpu_get(eng, id);
	if (!gpu || bytes >= GOS_BYTES_MAX) {
		gos_os_unlock(eng->lock);
		return -EINVAL;
	}
	old = gpu->external;
	gpu->external = bytes;
	gpu->entitlement_dirty = true;
	if (bytes > old)
		gos_gpu_after_shrink(eng, gpu);
	else
		gos_gpu_after_free(eng, gpu);
	gos_os_unlock(eng->lock);
	return 0;
}

int gos_gpu_get_stats(struct gos_engine *eng, u32 id, struct gos_gpu_stats *out)
{
	struct gos_gpu *gpu;

	if (!out)
		return -EINVAL;
	gos_os_lock(eng->lock);
	gpu = gos_gpu_get(eng, id);
	if (gpu) {
		*out = (struct gos_gpu_stats){
			.physical = gpu->physical,
			.reserve = gpu->reserve,
			.external = gpu->external,
			.capacity = gos_capacity(gpu),
			.used = gpu->used,
			.evicting = gpu->evicting,
			.waiting = gpu->waiting,
			.tenants = gpu->tenants.len,
			.outstanding_orders = eng->npending,
		};
	}
	gos_os_unlock(eng->lock);
	return gpu ? 0 : -EINVAL;
}
