// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Invariant checks for tests and debugging. They recount everything from
 * the chunks up, independently of the running totals, so a bookkeeping slip
 * anywhere shows as a mismatch here. O(all chunks).
 */
#include "internal.h"

struct checker {
	char *msg;
	size_t len;
	int err;
};

/* Writes "what (id N)" once; later violations keep the first. */
static void fail(struct checker *ck, const char *what, u64 id)
{
	char digits[24];
	size_t at = 0;
	int n = 0;

	if (ck->err)
		return;
	ck->err = -ERANGE;
	if (!ck->msg || !ck->len)
		return;
	do {
		digits[n++] = (char)('0' + id % 10);
		id /= 10;
	} while (id);
	while (*what && at + 1 < ck->len)
		ck->msg[at++] = *what++;
	for (what = " (id "; *what && at + 1 < ck->len; )
		ck->msg[at++] = *what++;
	while (n && at + 1 < ck->len)
		ck->msg[at++] = digits[--n];
	if (at + 1 < ck->len)
		ck->msg[at++] = ')';
	ck->msg[at] = '\0';
}

struct tally {
	u64 resident, evicting, host, waiting, demand, unevictable;
	u32 dev_sel, host_sel, nprio[GOS_NPRIO];
};

static bool in_own_bucket(const struct gos_tenant *t, const struct gos_chunk *c)
{
	const struct gos_buckets *bk = c->state == GOS_CHUNK_DEVICE ? &t->dev
								      : &t->hst;
	const struct gos_vec *v = &bk->b[c->prio];

	return c->pos < v->len && v->v[c->pos] == c;
}

static void check_orders(struct checker *ck, struct gos_engine *eng,
			 struct gos_buffer *buf, u32 inflight)
{
	struct gos_list *pos;
	u32 covered = 0, i;

	for (pos = buf->orders.next; pos != &buf->orders; pos = pos->next) {
		struct gos_msg *msg = gos_container_of(pos, struct gos_msg,
						       buf_node);
		u8 want = msg->m.kind == GOS_MSG_EVICT ? GOS_CHUNK_EVICTING
						       : GOS_CHUNK_RETURNING;

		if (gos_idmap_get(&eng->orders, msg->m.id) != msg)
			fail(ck, "order missing from the id map", msg->m.id);
		if (msg->first + msg->count > buf->nchunks)
			fail(ck, "order range outside its buffer", msg->m.id);
		for (i = msg->first; i < msg->first + msg->count &&
		     i < buf->nchunks; i++)
			if (buf->chunks[i].state != want)
				fail(ck, "order covers a chunk not in flight",
				     msg->m.id);
		covered += msg->count;
	}
	if (covered != inflight)
		fail(ck, "in-flight chunks without exactly one order", buf->id);
}

static void check_buffer(struct checker *ck, struct gos_engine *eng,
			 struct gos_buffer *buf, struct tally *tl)
{
	struct gos_tenant *t = buf->tenant;
	u32 inflight = 0, waiting = 0, i;

	tl->demand += buf->size;
	if (!buf->nchunks) {
		tl->resident += buf->size;
		tl->unevictable += buf->size;
	}
	for (i = 0; i < buf->nchunks; i++) {
		struct gos_chunk *c = &buf->chunks[i];
		u64 bytes = gos_chunk_size(eng, c);
		bool sel = c->pin == GOS_PIN_NONE &&
			   (c->state == GOS_CHUNK_DEVICE ||
			    c->state == GOS_CHUNK_HOST);

		tl->nprio[c->prio]++;
		switch (c->state) {
		case GOS_CHUNK_DEVICE:
			tl->resident += bytes;
			tl->dev_sel += sel;
			break;
		case GOS_CHUNK_EVICTING:
			tl->resident += bytes;
			tl->evicting += bytes;
			inflight++;
			break;
		case GOS_CHUNK_RETURNING:
			tl->resident += bytes;
			inflight++;
			break;
		case GOS_CHUNK_HOST:
			tl->host += bytes;
			tl->host_sel += sel;
			break;
		case GOS_CHUNK_WAITING:
			tl->waiting += bytes;
			waiting++;
			if (i < buf->wait_head || i >= buf->wait_tail)
				fail(ck, "waiting chunk outside its window",
				     buf->id);
			break;
		default:
			fail(ck, "chunk in no valid state", buf->id);
		}
		if (c->in_bucket != sel || (sel && !in_own_bucket(t, c)))
			fail(ck, "chunk selectability mismatch", buf->id);
	}
	if (waiting != buf->nwaiting ||
	    !!waiting != gos_list_linked(&buf->wait_node))
		fail(ck, "waiting count or queue mismatch", buf->id);
	check_orders(ck, eng, buf, inflight);
}

static void check_tenant(struct checker *ck, struct gos_engine *eng,
			 struct gos_tenant *t, struct tally *gpu_tl)
{
	struct tally tl = { 0 };
	struct gos_list *pos;
	u32 p, masked = 0;

	for (pos = t->buffer_list.next; pos != &t->buffer_list;
	     pos = pos->next)
		check_buffer(ck, eng, gos_container_of(pos, struct gos_buffer,
						       tenant_node), &tl);
	tl.resident += t->unmanaged;
	tl.unevictable += t->unmanaged;
	tl.demand += t->unmanaged;
	if (tl.resident != t->resident || tl.evicting != t->evicting ||
	    tl.host != t->host || tl.demand != t->demand ||
	    tl.unevictable != t->unevictable)
		fail(ck, "tenant byte totals disagree with its chunks", t->id);
	if (tl.dev_sel != t->dev.count || tl.host_sel != t->hst.count)
		fail(ck, "tenant bucket counts disagree", t->id);
	for (p = 0; p < GOS_NPRIO; p++) {
		if (tl.nprio[p] != t->nprio[p])
			fail(ck, "tenant priority counts disagree", t->id);
		if (t->dev.b[p].len)
			masked |= 1u << p;
		if (t->dev.b[p].cap < t->nprio[p] ||
		    t->hst.b[p].cap < t->nprio[p])
			fail(ck, "bucket capacity below reservation", t->id);
	}
	if (masked != t->dev.mask)
		fail(ck, "tenant bucket mask disagrees", t->id);
	if (t->resident + tl.waiting + t->host != t->demand)
		fail(ck, "tenant bytes not all in one place", t->id);
	gpu_tl->resident += tl.resident;
	gpu_tl->evicting += tl.evicting;
	gpu_tl->waiting += tl.waiting;
	gpu_tl->dev_sel += tl.dev_sel;
}

static u32 list_length(const struct gos_list *head)
{
	const struct gos_list *pos;
	u32 n = 0;

	for (pos = head->next; pos != head; pos = pos->next)
		n++;
	return n;
}

static bool gpu_has_orders(struct gos_engine *eng, struct gos_gpu *gpu)
{
	struct gos_list *pos;

	for (pos = eng->pending.next; pos != &eng->pending; pos = pos->next)
		if (gos_container_of(pos, struct gos_msg, pending_node)
			    ->buf->tenant->gpu == gpu)
			return true;
	return false;
}

struct gpu_walk {
	struct checker ck;
	struct gos_engine *eng;
};

static void walk_gpu(void *obj, void *ctx)
{
	struct gpu_walk *w = ctx;
	struct gos_gpu *gpu = obj;
	struct tally tl = { 0 };
	u32 i;

	for (i = 0; i < gpu->tenants.len; i++) {
		struct gos_tenant *t = gpu->tenants.v[i];

		if (t->slot != i || t->gpu != gpu)
			fail(&w->ck, "tenant slot mismatch", t->id);
		check_tenant(&w->ck, w->eng, t, &tl);
	}
	if (tl.resident != gpu->used || tl.evicting != gpu->evicting ||
	    tl.waiting != gpu->waiting)
		fail(&w->ck, "GPU totals disagree with tenants", gpu->id);
	/* Waiting chunks always have space coming, or they would wait forever. */
	if (gpu->waiting && (s64)gpu->waiting > gos_coming_free(gpu))
		fail(&w->ck, "waiting chunks not covered by evictions", gpu->id);
	if (w->eng->cfg.victim == GOS_VICTIM_LRU &&
	    list_length(&gpu->lru) != tl.dev_sel)
		fail(&w->ck, "GPU age list disagrees with buckets", gpu->id);
	/* Capacity holds once orders are done, unless nothing can move. */
	if (!gpu_has_orders(w->eng, gpu) && gpu->used > gos_capacity(gpu) &&
	    tl.dev_sel)
		fail(&w->ck, "GPU over capacity with no order outstanding",
		     gpu->id);
}

int gos_check(struct gos_engine *eng, char *msg, size_t len)
{
	struct gpu_walk w = { .ck = { msg, len, 0 }, .eng = eng };

	gos_os_lock(eng->lock);
	gos_idmap_each(&eng->gpus, walk_gpu, &w);
	if (list_length(&eng->pending) != eng->npending ||
	    eng->orders.count != eng->npending)
		fail(&w.ck, "outstanding order count mismatch", eng->npending);
	gos_os_unlock(eng->lock);
	return w.ck.err;
}

static void walk_gpu_at_rest(void *obj, void *ctx)
{
	struct gpu_walk *w = ctx;
	struct gos_engine *eng = w->eng;
	struct gos_gpu *gpu = obj;
	u64 cs = eng->cfg.chunk_size, now = gos_now(eng);
	bool someone_over = false;
	u32 i;

	if (eng->cfg.fairness != GOS_FAIR_WEIGHTED ||
	    eng->cfg.victim != GOS_VICTIM_EXCESS)
		return;
	if (gpu->waiting)
		fail(&w->ck, "chunks still waiting at rest", gpu->id);
	gos_entitle(eng, gpu);
	for (i = 0; i < gpu->tenants.len; i++) {
		struct gos_tenant *t = gpu->tenants.v[i];

		if (t->dev.count &&
		    (s64)t->resident - (s64)t->entitlement >= (s64)cs)
			someone_over = true;
	}
	for (i = 0; i < gpu->tenants.len; i++) {
		struct gos_tenant *t = gpu->tenants.v[i];
		/* In its lending backoff a tenant is owed only its share. */
		s64 below = (s64)gos_lend_ceiling(t, now) - (s64)t->resident;
		bool held = t->throttled || gos_lend_waiting(t, now);

		if (!t->hst.count)
			continue;
		/* Free space or share under one chunk is the price of chunking. */
		if (gos_free_now(gpu) >= cs && (!held || below >= (s64)cs))
			fail(&w->ck, "idle device memory while host data waits",
			     t->id);
		if (below >= (s64)cs && someone_over)
			fail(&w->ck, "tenant below share while another is above",
			     t->id);
	}
}

int gos_check_at_rest(struct gos_engine *eng, char *msg, size_t len)
{
	struct gpu_walk w = { .ck = { msg, len, 0 }, .eng = eng };

	gos_os_lock(eng->lock);
	if (eng->npending)
		fail(&w.ck, "orders outstanding", eng->npending);
	else
		gos_idmap_each(&eng->gpus, walk_gpu_at_rest, &w);
	gos_os_unlock(eng->lock);
	return w.ck.err;
}
