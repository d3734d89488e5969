// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Tenants: a job's share of one GPU, its policy and its statistics. */
#include "internal.h"

void gos_tenant_release(struct gos_engine *eng, struct gos_tenant *t)
{
	struct gos_gpu *gpu = t->gpu;
	struct gos_tenant *last = gpu->tenants.v[--gpu->tenants.len];

	gpu->used -= t->unmanaged;	/* its buffers are gone already */
	gpu->tenants.v[t->slot] = last;
	last->slot = t->slot;
	gpu->entitlement_dirty = true;
	gos_buckets_release(&t->dev);
	gos_buckets_release(&t->hst);
	gos_idmap_del(&eng->tenants, t->id);
	gos_os_free(t);
}

static int grow_u64(u64 **arr, u32 len)
{
	u64 *n = gos_os_zalloc((size_t)len * sizeof(u64));

	if (!n)
		return -ENOMEM;
	gos_os_free(*arr);
	*arr = n;
	return 0;
}

/* Sizes every per-decision scratch array for one more tenant. */
static int reserve_tenant(struct gos_engine *eng, struct gos_gpu *gpu)
{
	u32 want = gpu->tenants.len + 1;
	int err = gos_idmap_reserve(&eng->tenants);

	if (!err)
		err = gos_vec_reserve(&gpu->tenants, 1);
	if (!err)
		err = gos_vec_reserve_total(&eng->heap, eng->tenants.count + 1);
	if (err || want <= gpu->wf_len)
		return err;
	want *= 2;
	if (grow_u64(&gpu->wf_demand, want) || grow_u64(&gpu->wf_share, want) ||
	    grow_u64(&gpu->wf_min, want))
		return -ENOMEM;
	gos_os_free(gpu->wf_weight);
	gpu->wf_weight = gos_os_zalloc((size_t)want * sizeof(u32));
	if (!gpu->wf_weight) {
		gpu->wf_len = 0;
		return -ENOMEM;
	}
	gpu->wf_len = want;
	return 0;
}

static bool policy_valid(u32 weight, u64 limit)
{
	return weight >= 1 && weight <= GOS_WEIGHT_MAX && limit < GOS_BYTES_MAX;
}

int gos_tenant_create(struct gos_engine *eng, u32 gpu_id, u32 weight,
		      u64 limit, u32 *tenant)
{
	struct gos_gpu *gpu;
	struct gos_tenant *t;
	int err = -EINVAL;

	if (!tenant || !policy_valid(weight, limit))
		return -EINVAL;
	gos_os_lock(eng->lock);
	gpu = gos_gpu_get(eng, gpu_id);
	if (!gpu)
		goto out;
	err = reserve_tenant(eng, gpu);
	if (err)
		goto out;
	err = -ENOMEM;
	t = gos_os_zalloc(sizeof(*t));
	if (!t)
		goto out;
	t->id = ++eng->next_tenant;
	t->weight = weight;
	t->limit = limit;
	t->gpu = gpu;
	t->slot = gpu->tenants.len;
	gos_list_init(&t->buffer_list);
	gos_vec_push(&gpu->tenants, t);
	gos_idmap_put(&eng->tenants, t->id, t);
	gpu->entitlement_dirty = true;
	*tenant = t->id;
	err = 0;
out:
	gos_os_unlock(eng->lock);
	return err;
}

int gos_tenant_set_policy(struct gos_engine *eng, u32 tenant, u32 weight,
			  u64 limit)
{
	struct gos_tenant *t;

	if (!policy_valid(weight, limit))
		return -EINVAL;
	gos_os_lock(eng->lock);
	t = gos_idmap_get(&eng->tenants, tenant);
	if (t) {
		t->weight = weight;
		t->limit = limit;
		t->gpu->entitlement_dirty = true;
	}
	gos_os_unlock(eng->lock);
	return t ? 0 : -EINVAL;
}

int gos_tenant_set_min(struct gos_engine *eng, u32 tenant, u64 bytes)
{
	struct gos_tenant *t;

	if (bytes >= GOS_BYTES_MAX)
		return -EINVAL;
	gos_os_lock(eng->lock);
	t = gos_idmap_get(&eng->tenants, tenant);
	if (t) {
		t->min_bytes = bytes;
		t->gpu->entitlement_dirty = true;
	}
	gos_os_unlock(eng->lock);
	return t ? 0 : -EINVAL;
}

int gos_tenant_set_max_buffers(struct gos_engine *eng, u32 tenant, u32 most)
{
	struct gos_tenant *t;

	gos_os_lock(eng->lock);
	t = gos_idmap_get(&eng->tenants, tenant);
	if (t)
		t->max_buffers = most;
	gos_os_unlock(eng->lock);
	return t ? 0 : -EINVAL;
}

void gos_tenant_pin(struct gos_engine *eng, struct gos_tenant *t, u64 bytes)
{
	t->unevictable += bytes;
	t->resident += bytes;
	t->gpu->used += bytes;
	if (t->resident > t->st.peak_resident)
		t->st.peak_resident = t->resident;
	gos_fit_capacity(eng, t->gpu);
	gos_trim_waiting(eng, t->gpu);
}

void gos_tenant_unpin(struct gos_tenant *t, u64 bytes)
{
	t->unevictable -= bytes;
	t->resident -= bytes;
	t->gpu->used -= bytes;
}

int gos_tenant_set_unmanaged(struct gos_engine *eng, u32 tenant, u64 bytes)
{
	struct gos_tenant *t;
	u64 old;

	if (bytes >= GOS_BYTES_MAX)
		return -EINVAL;
	gos_os_lock(eng->lock);
	t = gos_idmap_get(&eng->tenants, tenant);
	if (!t) {
		gos_os_unlock(eng->lock);
		return -EINVAL;
	}
	old = t->unmanaged;
	t->unmanaged = bytes;
	t->demand = t->demand - old + bytes;
	t->gpu->entitlement_dirty = true;
	if (bytes > t->st.peak_unmanaged)
		t->st.peak_unmanaged = bytes;
	if (bytes > old) {
		gos_tenant_pin(eng, t, bytes - old);
	} else if (bytes < old) {
		gos_tenant_unpin(t, old - bytes);
		gos_gpu_after_free(eng, t->gpu);
	}
	gos_os_unlock(eng->lock);
	return 0;
}

int gos_tenant_destroy(struct gos_engine *eng, u32 tenant)
{
	struct gos_tenant *t;
	int err = -EINVAL;

	gos_os_lock(eng->lock);
	t = gos_idmap_get(&eng->tenants, tenant);
	if (t && t->buffers) {
		err = -EBUSY;
	} else if (t) {
		struct gos_gpu *gpu = t->gpu;

		gos_tenant_release(eng, t);
		gos_gpu_after_free(eng, gpu);
		err = 0;
	}
	gos_os_unlock(eng->lock);
	return err;
}

struct tenant_list {
	u32 *ids;
	u32 max;
	u32 count;
};

static void list_tenant(void *value, void *ctx)
{
	struct tenant_list *l = ctx;
	struct gos_tenant *t = value;

	if (l->count < l->max)
		l->ids[l->count] = t->id;
	l->count++;
}

int gos_tenant_list(struct gos_engine *eng, u32 *ids, u32 max)
{
	struct tenant_list l = { ids, ids ? max : 0, 0 };

	gos_os_lock(eng->lock);
	gos_idmap_each(&eng->tenants, list_tenant, &l);
	gos_os_unlock(eng->lock);
	return (int)l.count;
}

void gos_tenant_each_client(struct gos_engine *eng, struct gos_tenant *t,
			    void (*fn)(struct gos_client *cl, void *ctx),
			    void *ctx)
{
	/* A count, not gos_rand(): reading stats must not move the random stream. */
	u64 mark = ++eng->next_mark;
	struct gos_list *pos;

	for (pos = t->buffer_list.next; pos != &t->buffer_list;
	     pos = pos->next) {
		struct gos_buffer *buf = gos_container_of(pos,
							   struct gos_buffer,
							   tenant_node);

		if (buf->client->mark == mark)
			continue;
		buf->client->mark = mark;
		fn(buf->client, ctx);
	}
}

static void count_client(struct gos_client *cl, void *ctx)
{
	struct gos_tenant_stats *out = ctx;

	out->clients++;
	out->stalled_clients += cl->stalled;
}

/* O(the tenant's buffers), which its max_buffers bounds. */
int gos_tenant_get_stats(struct gos_engine *eng, u32 tenant,
			 struct gos_tenant_stats *out)
{
	struct gos_tenant *t;

	if (!out)
		return -EINVAL;
	gos_os_lock(eng->lock);
	t = gos_idmap_get(&eng->tenants, tenant);
	if (t) {
		gos_entitle(eng, t->gpu);
		*out = t->st;	/* its peaks and counters */
		out->gpu = t->gpu->id;
		out->weight = t->weight;
		out->limit = t->limit;
		out->min_bytes = t->min_bytes;
		out->throttled = t->throttled;
		out->buffers = t->buffers;
		out->demand = t->demand;
		out->resident = t->resident;
		out->host = t->host;
		out->unevictable = t->unevictable;
		out->unmanaged = t->unmanaged;
		out->entitlement = t->entitlement;
		out->oversub_ns = gos_tenant_oversub_ns(eng, t);
		out->clients = 0;
		out->stalled_clients = 0;
		gos_tenant_each_client(eng, t, count_client, out);
	}
	gos_os_unlock(eng->lock);
	return t ? 0 : -EINVAL;
}
