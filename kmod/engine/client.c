// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Clients: the processes that hold buffers, and what their exit frees. */
#include "internal.h"

void gos_client_release(struct gos_engine *eng, struct gos_client *cl)
{
	while (!gos_list_empty(&cl->buffers))
		gos_buffer_release(eng, gos_list_first(&cl->buffers,
						       struct gos_buffer,
						       client_node));
	gos_msg_drop_client(eng, cl);
	gos_idmap_del(&eng->clients, cl->id);
	gos_os_free(cl);
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
	gos_gpu_after_free(eng, gpu);
}

int gos_client_exit(struct gos_engine *eng, u32 client)
{
	struct gos_client *cl;

	gos_os_lock(eng->lock);
	cl = gos_idmap_get(&eng->clients, client);
	if (cl) {
		gos_client_release(eng, cl);
		gos_idmap_each(&eng->gpus, each_gpu_after_free, eng);
	}
	gos_os_unlock(eng->lock);
	return cl ? 0 : -EINVAL;
}

static void each_gpu_after_shrink(void *gpu, void *eng)
{
	gos_gpu_after_shrink(eng, gpu);
}

/* A stalled client heard again gets its stalled chunks back in play. */
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
