// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * New chunks that wait for evictions to free their space. They are placed
 * oldest allocation first as memory frees up. If the evictions they counted
 * on fail or time out, the newest waiting chunks go to the host instead, so
 * an allocation never waits longer than one order timeout.
 */
#include "internal.h"

/*
 * Tells the client where the buffer's waiting chunks went: they lie in one
 * range, placed on the device from its start as space freed and trimmed to
 * the host from its end, so the notice names the range and its split (the
 * first device_bytes of it on the device, the rest on the host). Only
 * those: the rest of the buffer may be moving under other orders, which
 * the client hears about itself.
 */
static void buffer_settled(struct gos_engine *eng, struct gos_buffer *buf)
{
	struct gos_message m = { 0 };

	gos_list_del(&buf->wait_node);
	m.kind = GOS_MSG_SETTLED;
	m.tenant = buf->tenant->id;
	m.buffer = buf->id;
	m.offset = (u64)buf->wait_first * eng->cfg.chunk_size;
	m.length = buf->waited_device + buf->waited_host;
	m.device_bytes = buf->waited_device;
	m.host_bytes = buf->waited_host;
	/*
	 * Without memory for the notice the client still learns the split
	 * from gos_buffer_placement(); the ledger itself is already right.
	 */
	gos_notice(eng, buf->client, &m);
}

void gos_settle(struct gos_engine *eng, struct gos_gpu *gpu)
{
	while (!gos_list_empty(&gpu->waitq)) {
		struct gos_buffer *buf = gos_list_first(&gpu->waitq,
							struct gos_buffer,
							wait_node);

		while (buf->nwaiting) {
			struct gos_chunk *c = &buf->chunks[buf->wait_head];

			if (c->state != GOS_CHUNK_WAITING) {
				buf->wait_head++;
				continue;
			}
			if (gos_chunk_size(eng, c) > gos_free_now(gpu))
				return;
			gos_chunk_set(eng, c, GOS_CHUNK_DEVICE);
			buf->waited_device += gos_chunk_size(eng, c);
			buf->wait_head++;
			buf->nwaiting--;
		}
		buffer_settled(eng, buf);
	}
}

void gos_trim_waiting(struct gos_engine *eng, struct gos_gpu *gpu)
{
	gos_settle(eng, gpu);
	while (gpu->waiting && (s64)gpu->waiting > gos_coming_free(gpu)) {
		struct gos_buffer *buf = gos_list_last(&gpu->waitq,
						       struct gos_buffer,
						       wait_node);
		struct gos_chunk *c = &buf->chunks[buf->wait_tail - 1];

		buf->wait_tail--;
		if (c->state != GOS_CHUNK_WAITING)
			continue;
		gos_chunk_set(eng, c, GOS_CHUNK_HOST);
		buf->waited_host += gos_chunk_size(eng, c);
		buf->tenant->st.bytes_host_placed += gos_chunk_size(eng, c);
		if (!--buf->nwaiting)
			buffer_settled(eng, buf);
	}
}
