// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Engine objects and entry points: GPUs, tenants, clients, buffers. */
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
	       cfg->select <= GOS_SELECT_RANDOM && cfg->order_timeout_ns;
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

static struct gos_gpu *gpu_get(struct gos_engine *eng, u32 id)
{
	return gos_idmap_get(&eng->gpus, (u64)id + 1);
}

/* Unlinks and frees a buffer and its orders; planning is the caller's. */
static void buffer_release(struct gos_engine *eng, struct gos_buffer *buf)
{
	struct gos_tenant *t = buf->tenant;
	struct gos_gpu *gpu = t->gpu;
	u32 i;

	gos_orders_cancel_buffer(eng, buf);
	if (gos_list_linked(&buf->wait_node))
		gos_list_del(&buf->wait_node);
	for (i = 0; i < buf->nchunks; i++) {
		struct gos_chunk *c = &buf->chunks[i];

		t->nprio[c->prio]--;
		gos_chunk_set(eng, c, GOS_CHUNK_NONE);
	}
	if (!buf->nchunks) {
		t->unevictable -= buf->size;
		t->resident -= buf->size;
		gpu->used -= buf->size;
	}
	t->demand -= buf->size;
	t->buffers--;
	gpu->entitlement_dirty = true;
	gos_list_del(&buf->client_node);
	gos_list_del(&buf->tenant_node);
	gos_idmap_del(&eng->buffers, buf->id);
	gos_os_free(buf);
}

static void client_release(struct gos_engine *eng, struct gos_client *cl)
{
	while (!gos_list_empty(&cl->buffers))
		buffer_release(eng, gos_list_first(&cl->buffers,
						   struct gos_buffer,
						   client_node));
	gos_msg_drop_client(eng, cl);
	gos_idmap_del(&eng->clients, cl->id);
	gos_os_free(cl);
}

static void tenant_release(struct gos_engine *eng, struct gos_tenant *t)
{
	struct gos_gpu *gpu = t->gpu;
	struct gos_tenant *last = gpu->tenants.v[--gpu->tenants.len];

	gpu->tenants.v[t->slot] = last;
	last->slot = t->slot;
	gpu->entitlement_dirty = true;
	gos_buckets_release(&t->dev);
	gos_buckets_release(&t->hst);
	gos_idmap_del(&eng->tenants, t->id);
	gos_os_free(t);
}

static void gpu_release(struct gos_gpu *gpu)
{
	gos_vec_release(&gpu->tenants);
	gos_os_free(gpu->wf_demand);
	gos_os_free(gpu->wf_share);
	gos_os_free(gpu->wf_min);
	gos_os_free(gpu->wf_weight);
	gos_os_free(gpu);
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
		client_release(eng, obj);
	while ((obj = any_value(&eng->tenants)))
		tenant_release(eng, obj);
	while ((obj = any_value(&eng->gpus))) {
		gos_idmap_del(&eng->gpus, (u64)((struct gos_gpu *)obj)->id + 1);
		gpu_release(obj);
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
	if (gpu_get(eng, id))
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
static void gpu_after_free(struct gos_engine *eng, struct gos_gpu *gpu)
{
	gos_settle(eng, gpu);
	gos_plan_returns(eng, gpu);
}

/* After memory disappears: evict to fit, then drop uncoverable waits. */
static void gpu_after_shrink(struct gos_engine *eng, struct gos_gpu *gpu)
{
	gos_fit_capacity(eng, gpu);
	gos_trim_waiting(eng, gpu);
}

int gos_gpu_set_external(struct gos_engine *eng, u32 id, u64 bytes)
{
	struct gos_gpu *gpu;
	u64 old;

	gos_os_lock(eng->lock);
	gpu = gpu_get(eng, id);
	if (!gpu || bytes >= GOS_BYTES_MAX) {
		gos_os_unlock(eng->lock);
		return -EINVAL;
	}
	old = gpu->external;
	gpu->external = bytes;
	gpu->entitlement_dirty = true;
	if (bytes > old)
		gpu_after_shrink(eng, gpu);
	else
		gpu_after_free(eng, gpu);
	gos_os_unlock(eng->lock);
	return 0;
}

int gos_gpu_get_stats(struct gos_engine *eng, u32 id, struct gos_gpu_stats *out)
{
	struct gos_gpu *gpu;

	if (!out)
		return -EINVAL;
	gos_os_lock(eng->lock);
	gpu = gpu_get(eng, id);
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
	gpu = gpu_get(eng, gpu_id);
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

		tenant_release(eng, t);
		gpu_after_free(eng, gpu);
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
		*out = (struct gos_tenant_stats){
			.gpu = t->gpu->id,
			.weight = t->weight,
			.limit = t->limit,
			.min_bytes = t->min_bytes,
			.demand = t->demand,
			.resident = t->resident,
			.host = t->host,
			.unevictable = t->unevictable,
			.entitlement = t->entitlement,
			.peak_resident = t->st.peak_resident,
			.peak_host = t->st.peak_host,
			.bytes_evicted = t->st.bytes_evicted,
			.evictions = t->st.evictions,
			.bytes_returned = t->st.bytes_returned,
			.returns = t->st.returns,
			.bytes_host_placed = t->st.bytes_host_placed,
			.allocs = t->st.allocs,
			.slow_allocs = t->st.slow_allocs,
			.failed_orders = t->st.failed_orders,
			.oversub_ns = gos_tenant_oversub_ns(eng, t),
			.throttle_events = t->st.throttle_events,
			.throttled = t->throttled,
			.buffers = t->buffers,
		};
	}
	gos_os_unlock(eng->lock);
	return t ? 0 : -EINVAL;
}

int gos_client_create(struct gos_engine *eng, u32 *client)
{
	struct gos_client *cl;
	int err;

	if (!client)
		return -EINVAL;
	gos_os_lock(eng->lock);
	err = gos_idmap_reserve(&eng->clients);
	cl = err ? NULL : gos_os_zalloc(sizeof(*cl));
	if (cl) {
		cl->id = ++eng->next_client;
		gos_list_init(&cl->buffers);
		gos_list_init(&cl->outbox);
		gos_idmap_put(&eng->clients, cl->id, cl);
		*client = cl->id;
	}
	gos_os_unlock(eng->lock);
	return cl ? 0 : -ENOMEM;
}

static void each_gpu_after_free(void *gpu, void *eng)
{
	gpu_after_free(eng, gpu);
}

int gos_client_exit(struct gos_engine *eng, u32 client)
{
	struct gos_client *cl;

	gos_os_lock(eng->lock);
	cl = gos_idmap_get(&eng->clients, client);
	if (cl) {
		client_release(eng, cl);
		gos_idmap_each(&eng->gpus, each_gpu_after_free, eng);
	}
	gos_os_unlock(eng->lock);
	return cl ? 0 : -EINVAL;
}

static void each_gpu_after_shrink(void *gpu, void *eng)
{
	gpu_after_shrink(eng, gpu);
}

/* A stalled client that talks again gets its stalled chunks back in play. */
void gos_client_resume(struct gos_engine *eng, struct gos_client *cl)
{
	struct gos_list *pos;
	u32 i;

	if (!cl->stalled)
		return;
	cl->stalled = false;
	for (pos = cl->buffers.next; pos != &cl->buffers; pos = pos->next) {
		struct gos_buffer *buf = gos_container_of(pos,
							   struct gos_buffer,
							   client_node);

		for (i = 0; i < buf->nchunks; i++)
			if (buf->chunks[i].pin == GOS_PIN_STALLED)
				gos_chunk_set_pin(eng, &buf->chunks[i],
						  GOS_PIN_NONE);
	}
	/* Chunks that could not be evicted before may be evicted now. */
	gos_idmap_each(&eng->gpus, each_gpu_after_shrink, eng);
}

static struct gos_buffer *gos_buffer_of(struct gos_engine *eng, u32 client,
					u64 buffer)
{
	struct gos_buffer *buf = gos_idmap_get(&eng->buffers, buffer);

	return buf && buf->client->id == client ? buf : NULL;
}

int gos_free(struct gos_engine *eng, u32 client, u64 buffer)
{
	struct gos_buffer *buf;
	struct gos_gpu *gpu;

	gos_os_lock(eng->lock);
	buf = gos_buffer_of(eng, client, buffer);
	if (buf) {
		gpu = buf->tenant->gpu;
		buffer_release(eng, buf);
		gpu_after_free(eng, gpu);
	}
	gos_os_unlock(eng->lock);
	return buf ? 0 : -ENOENT;
}

static bool range_valid(const struct gos_buffer *buf, u64 offset, u64 length)
{
	return length && offset < buf->size && length <= buf->size - offset;
}

int gos_set_priority(struct gos_engine *eng, u32 client, u64 buffer,
		     u64 offset, u64 length, u32 prio)
{
	struct gos_buffer *buf;
	u32 first, last, i;
	int err = -ENOENT;

	if (prio > GOS_PRIO_MAX)
		return -EINVAL;
	gos_os_lock(eng->lock);
	buf = gos_buffer_of(eng, client, buffer);
	if (!buf)
		goto out;
	err = -EINVAL;
	if (!range_valid(buf, offset, length))
		goto out;
	err = 0;
	if (!buf->nchunks)
		goto out;	/* unevictable: nothing to rank */
	first = (u32)(offset / eng->cfg.chunk_size);
	last = (u32)((offset + length - 1) / eng->cfg.chunk_size);
	err = gos_tenant_reserve_prio(buf->tenant, prio, last - first + 1);
	if (err)
		goto out;
	for (i = first; i <= last; i++)
		gos_chunk_set_prio(eng, &buf->chunks[i], (u8)prio);
	gpu_after_shrink(eng, buf->tenant->gpu);
out:
	gos_os_unlock(eng->lock);
	return err;
}

int gos_buffer_placement(struct gos_engine *eng, u32 client, u64 buffer,
			 u32 first, u32 count, u8 *states)
{
	struct gos_buffer *buf;
	int err = -ENOENT;
	u32 i;

	if (!states)
		return -EINVAL;
	gos_os_lock(eng->lock);
	buf = gos_buffer_of(eng, client, buffer);
	if (buf) {
		err = -EINVAL;
		if (first <= buf->nchunks && count <= buf->nchunks - first) {
			for (i = 0; i < count; i++)
				states[i] = buf->chunks[first + i].state;
			err = 0;
		}
	}
	gos_os_unlock(eng->lock);
	return err;
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
