// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Buffers after their allocation: free, priorities and placement. */
#include "internal.h"

/* Unlinks and frees a buffer and its orders; planning is the caller's. */
void gos_buffer_release(struct gos_engine *eng, struct gos_buffer *buf)
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
	if (!buf->nchunks)
		gos_tenant_unpin(t, buf->size);
	t->demand -= buf->size;
	t->buffers--;
	gpu->entitlement_dirty = true;
	gos_list_del(&buf->client_node);
	gos_list_del(&buf->tenant_node);
	gos_idmap_del(&eng->buffers, buf->id);
	gos_os_free(buf);
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
		gos_buffer_release(eng, buf);
		gos_gpu_after_free(eng, gpu);
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
	gos_gpu_after_shrink(eng, buf->tenant->gpu);
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
