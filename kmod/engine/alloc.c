// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Allocation. With free memory and nobody waiting, every chunk goes on the
 * device and nothing else happens (the fast path). Otherwise the fairness
 * mode decides: the reducer makes room, static partitions cap the tenant,
 * or FCFS spills whatever does not fit.
 */
#include "internal.h"

static struct gos_buffer *buffer_new(struct gos_engine *eng,
				     struct gos_client *cl,
				     struct gos_tenant *t, u64 size,
				     u32 nchunks, u8 prio, bool again)
{
	struct gos_buffer *buf;
	u32 i;

	buf = gos_os_zalloc(sizeof(*buf) + (size_t)nchunks *
			    sizeof(struct gos_chunk));
	if (!buf)
		return NULL;
	buf->id = ++eng->next_buffer;
	buf->client = cl;
	buf->tenant = t;
	buf->size = size;
	buf->nchunks = nchunks;
	gos_list_init(&buf->wait_node);
	gos_list_init(&buf->orders);
	for (i = 0; i < nchunks; i++) {
		struct gos_chunk *c = &buf->chunks[i];

		c->buf = buf;
		c->index = i;
		c->prio = prio;
		c->state = GOS_CHUNK_NONE;
		gos_list_init(&c->lru);
	}
	gos_idmap_put(&eng->buffers, buf->id, buf);
	gos_list_add_tail(&buf->client_node, &cl->buffers);
	gos_list_add_tail(&buf->tenant_node, &t->buffer_list);
	t->nprio[prio] += nchunks;
	t->demand += size;
	t->buffers++;
	if (!again)
		t->st.allocs++;
	t->gpu->entitlement_dirty = true;
	return buf;
}

static void place(struct gos_engine *eng, struct gos_chunk *c, u8 state,
		  struct gos_alloc_result *res)
{
	u64 bytes = gos_chunk_size(eng, c);

	gos_chunk_set(eng, c, state);
	if (state == GOS_CHUNK_DEVICE) {
		res->device_bytes += bytes;
	} else if (state == GOS_CHUNK_WAITING) {
		res->waiting_bytes += bytes;
	} else {
		res->host_bytes += bytes;
		c->buf->tenant->st.bytes_host_placed += bytes;
	}
}

/*
 * Unplaced chunks, in order: on the device while it has room; then waiting
 * for space that evictions in flight will free; what even that cannot
 * cover (the reducer found nothing more to take) goes to the host, and so
 * does every chunk after it. A new buffer is thus laid out device, waiting,
 * host, in that order (the reducer's own picks are its last chunks), and
 * the agent reads where each chunk is from the reply's byte counts.
 */
static void place_rest_waiting(struct gos_engine *eng, struct gos_buffer *buf,
			       struct gos_alloc_result *res)
{
	struct gos_gpu *gpu = buf->tenant->gpu;
	s64 cover = gos_coming_free(gpu) - (s64)gpu->waiting;
	bool spilled = false;
	u32 i;

	for (i = 0; i < buf->nchunks; i++) {
		struct gos_chunk *c = &buf->chunks[i];
		u64 bytes = gos_chunk_size(eng, c);

		if (c->state != GOS_CHUNK_NONE)
			continue;
		if (spilled || (s64)bytes > cover) {
			spilled = true;
			place(eng, c, GOS_CHUNK_HOST, res);
			continue;
		}
		cover -= (s64)bytes;
		if (gos_list_empty(&gpu->waitq) && bytes <= gos_free_now(gpu)) {
			place(eng, c, GOS_CHUNK_DEVICE, res);
			continue;
		}
		if (!buf->nwaiting++) {
			buf->wait_head = i;
			buf->wait_first = i;
			gos_list_add_tail(&buf->wait_node, &gpu->waitq);
		}
		buf->wait_tail = i + 1;
		place(eng, c, GOS_CHUNK_WAITING, res);
	}
}

/*
 * Chunks in order on the device up to room bytes, the rest on the host
 * (a short last chunk too, where it would fit: the device part is a prefix).
 */
static void place_up_to(struct gos_engine *eng, struct gos_buffer *buf,
			u64 room, struct gos_alloc_result *res)
{
	u32 i;

	for (i = 0; i < buf->nchunks; i++) {
		struct gos_chunk *c = &buf->chunks[i];
		u64 bytes = gos_chunk_size(eng, c);

		if (bytes <= room && !res->host_bytes) {
			room -= bytes;
			place(eng, c, GOS_CHUNK_DEVICE, res);
		} else {
			place(eng, c, GOS_CHUNK_HOST, res);
		}
	}
}

static void place_static(struct gos_engine *eng, struct gos_buffer *buf,
			 struct gos_alloc_result *res)
{
	struct gos_tenant *t = buf->tenant;
	u64 room = gos_free_now(t->gpu);

	gos_entitle(eng, t->gpu);
	if (t->entitlement < t->resident + room)
		room = t->entitlement > t->resident ?
		       t->entitlement - t->resident : 0;
	place_up_to(eng, buf, room, res);
}

static void place_reduced(struct gos_engine *eng, struct gos_buffer *buf,
			  struct gos_alloc_result *res)
{
	struct gos_gpu *gpu = buf->tenant->gpu;
	s64 claimable = gos_coming_free(gpu) - (s64)gpu->waiting;
	struct gos_unplaced unplaced = {
		.buf = buf, .n = buf->nchunks, .bytes = buf->size
	};

	gos_reduce(eng, gpu, &unplaced, (s64)buf->size - claimable, false);
	/* Chunks the reducer sent to the host were placed there already. */
	res->host_bytes = buf->size - unplaced.bytes;
	place_rest_waiting(eng, buf, res);
}

/*
 * What a tenant may hold that never moves: its weighted share of the GPU
 * among the GPU's tenants now, or its minimum if that is more. The shares
 * add up to the capacity, so one tenant's pinned bytes never hold another
 * below its entitlement; beyond it an allocation is refused, as a full GPU
 * would refuse it. FCFS promises no shares and keeps no such bound.
 */
static bool unevictable_fits(struct gos_engine *eng,
			     const struct gos_tenant *t, u64 size)
{
	if (eng->cfg.fairness == GOS_FAIR_FCFS)
		return true;
	gos_entitle(eng, t->gpu);
	return t->unevictable + size <= t->share;
}

static int alloc_unevictable(struct gos_engine *eng, struct gos_buffer *buf,
			     struct gos_alloc_result *res)
{
	res->device_bytes = buf->size;
	gos_tenant_pin(eng, buf->tenant, buf->size);
	return 0;
}

static bool fast_path(struct gos_engine *eng, const struct gos_gpu *gpu,
		      u64 size)
{
	return eng->cfg.fairness != GOS_FAIR_STATIC &&
	       gos_list_empty(&gpu->waitq) && size <= gos_free_now(gpu);
}

static int alloc_locked(struct gos_engine *eng, u32 client, u32 tenant,
			u64 size, u32 prio, u32 flags,
			struct gos_alloc_result *res)
{
	struct gos_client *cl = gos_idmap_get(&eng->clients, client);
	struct gos_tenant *t = gos_idmap_get(&eng->tenants, tenant);
	bool pinned = flags & GOS_ALLOC_UNEVICTABLE;
	u64 n64 = (size + eng->cfg.chunk_size - 1) / eng->cfg.chunk_size;
	struct gos_buffer *buf;
	u32 n = pinned ? 0 : (u32)n64;
	int err;

	if (!cl || !t)
		return -EINVAL;
	/* The count is a u32: more chunks would wrap to a small buffer. */
	if (!pinned && n64 > GOS_CHUNKS_MAX)
		return -EFBIG;
	if (t->limit && t->demand + size > t->limit)
		return -EDQUOT;
	if (t->max_buffers && t->buffers >= t->max_buffers)
		return -ENOBUFS;
	if (pinned && !unevictable_fits(eng, t, size))
		return -ENOSPC;
	err = gos_idmap_reserve(&eng->buffers);
	if (!err && n)
		err = gos_tenant_reserve_prio(t, prio, n);
	if (err)
		return err;
	buf = buffer_new(eng, cl, t, size, n, (u8)prio, flags & GOS_ALLOC_AGAIN);
	if (!buf)
		return -ENOMEM;
	*res = (struct gos_alloc_result){ .buffer = buf->id };
	if (pinned)
		return alloc_unevictable(eng, buf, res);
	/* A stalled client is given no device memory until it is heard. */
	if (cl->stalled) {
		place_up_to(eng, buf, 0, res);
		return 0;
	}
	if (fast_path(eng, t->gpu, size)) {
		place_up_to(eng, buf, size, res);
		return 0;
	}
	if (!(flags & GOS_ALLOC_AGAIN))
		t->st.slow_allocs++;
	if (eng->cfg.fairness == GOS_FAIR_WEIGHTED)
		place_reduced(eng, buf, res);
	else if (eng->cfg.fairness == GOS_FAIR_STATIC)
		place_static(eng, buf, res);
	else
		place_up_to(eng, buf, gos_free_now(t->gpu), res);
	return 0;
}

int gos_alloc(struct gos_engine *eng, u32 client, u32 tenant, u64 size,
	      u32 prio, u32 flags, struct gos_alloc_result *res)
{
	int err;

	if (!res || !size || size >= GOS_BYTES_MAX || prio > GOS_PRIO_MAX ||
	    (flags & ~(GOS_ALLOC_UNEVICTABLE | GOS_ALLOC_AGAIN)))
		return -EINVAL;
	gos_os_lock(eng->lock);
	err = alloc_locked(eng, client, tenant, size, prio, flags, res);
	gos_os_unlock(eng->lock);
	return err;
}
