// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The only place a chunk changes state or pin. Keeping the accounting here
 * makes "each chunk is in exactly one state" and the byte totals hold by
 * construction; gos_check() verifies them independently.
 */
#include "internal.h"

static bool selectable(const struct gos_chunk *c)
{
	return c->pin == GOS_PIN_NONE &&
	       (c->state == GOS_CHUNK_DEVICE || c->state == GOS_CHUNK_HOST);
}

/*
 * The GPU-wide age list costs two cache misses per move (its neighbours),
 * so it is kept only when the LRU victim policy reads it.
 */
static bool tracks_age(const struct gos_engine *eng)
{
	return eng->cfg.victim == GOS_VICTIM_LRU;
}

static void unlink_selectable(struct gos_engine *eng, struct gos_chunk *c)
{
	struct gos_tenant *t = c->buf->tenant;

	if (!c->in_bucket)
		return;
	if (c->state == GOS_CHUNK_DEVICE) {
		gos_buckets_del(&t->dev, c);
		if (tracks_age(eng))
			gos_list_del(&c->lru);
	} else {
		gos_buckets_del(&t->hst, c);
	}
	c->in_bucket = 0;
}

static void link_selectable(struct gos_engine *eng, struct gos_chunk *c)
{
	struct gos_tenant *t = c->buf->tenant;

	if (!selectable(c))
		return;
	if (c->state == GOS_CHUNK_DEVICE) {
		gos_buckets_add(&t->dev, c);
		if (tracks_age(eng))
			gos_list_add_tail(&c->lru, &t->gpu->lru);
	} else {
		gos_buckets_add(&t->hst, c);
	}
	c->in_bucket = 1;
}

static void account(struct gos_chunk *c, u64 bytes, bool add)
{
	struct gos_tenant *t = c->buf->tenant;
	struct gos_gpu *gpu = t->gpu;
	u64 *resident[] = { &t->resident, &gpu->used };
	u64 *evicting[] = { &t->evicting, &gpu->evicting };
	u64 **fields = NULL;
	u32 n = 0, i;

	switch (c->state) {
	case GOS_CHUNK_DEVICE:
	case GOS_CHUNK_RETURNING:
		fields = resident;
		n = 2;
		break;
	case GOS_CHUNK_EVICTING:
		for (i = 0; i < 2; i++)
			*evicting[i] = add ? *evicting[i] + bytes
					   : *evicting[i] - bytes;
		fields = resident;
		n = 2;
		break;
	case GOS_CHUNK_HOST:
		t->host = add ? t->host + bytes : t->host - bytes;
		break;
	case GOS_CHUNK_WAITING:
		gpu->waiting = add ? gpu->waiting + bytes : gpu->waiting - bytes;
		break;
	}
	for (i = 0; i < n; i++)
		*fields[i] = add ? *fields[i] + bytes : *fields[i] - bytes;
}

/* Oversubscribed time is the time a tenant has any bytes in host RAM. */
void gos_tenant_note_host(struct gos_engine *eng, struct gos_tenant *t)
{
	bool now_host = t->host > 0;

	if (now_host == t->oversub_open)
		return;
	t->oversub_open = now_host;
	if (now_host)
		t->oversub_since = gos_now(eng);
	else
		t->st.oversub_ns += gos_now(eng) - t->oversub_since;
}

/* The tenant's oversubscribed time so far, the open stretch included. */
u64 gos_tenant_oversub_ns(struct gos_engine *eng, const struct gos_tenant *t)
{
	if (!t->oversub_open)
		return t->st.oversub_ns;
	return t->st.oversub_ns + gos_now(eng) - t->oversub_since;
}

void gos_chunk_set(struct gos_engine *eng, struct gos_chunk *c, u8 state)
{
	struct gos_tenant *t = c->buf->tenant;
	u64 bytes = gos_chunk_size(eng, c);

	if (c->state != GOS_CHUNK_NONE) {
		unlink_selectable(eng, c);
		account(c, bytes, false);
	}
	c->state = state;
	if (state == GOS_CHUNK_NONE) {
		c->pin = GOS_PIN_NONE;
	} else {
		account(c, bytes, true);
		link_selectable(eng, c);
	}
	if (t->resident > t->st.peak_resident)
		t->st.peak_resident = t->resident;
	if (t->host > t->st.peak_host)
		t->st.peak_host = t->host;
	gos_tenant_note_host(eng, t);
}

void gos_chunk_set_pin(struct gos_engine *eng, struct gos_chunk *c, u8 pin)
{
	unlink_selectable(eng, c);
	c->pin = pin;
	link_selectable(eng, c);
}

/*
 * A chunk whose client was ordered to move it and let the order expire, or
 * that a stalled client would have been ordered to move, is counted in
 * host RAM. It is managed memory: when another allocation needs the room,
 * the driver itself evicts it (UVM evicts any process's pages to make room
 * for a fault or a prefetch: open-gpu-kernel-modules,
 * kernel-open/nvidia-uvm/uvm_pmm_gpu.c, pick_and_evict_root_chunk), so
 * neither the client's cooperation nor its running is needed. It stays
 * pinned, never returned, until the client is heard again.
 */
void gos_chunk_forfeit(struct gos_engine *eng, struct gos_chunk *c)
{
	c->pin = GOS_PIN_STALLED;
	gos_chunk_set(eng, c, GOS_CHUNK_HOST);
	c->buf->tenant->st.bytes_forfeited += gos_chunk_size(eng, c);
}

/* A new priority also lifts a failure pin: the user changed the facts. */
void gos_chunk_set_prio(struct gos_engine *eng, struct gos_chunk *c, u8 prio)
{
	struct gos_tenant *t = c->buf->tenant;

	unlink_selectable(eng, c);
	t->nprio[c->prio]--;
	c->prio = prio;
	t->nprio[prio]++;
	if (c->pin == GOS_PIN_FAILED)
		c->pin = GOS_PIN_NONE;
	link_selectable(eng, c);
}
