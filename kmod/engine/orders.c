// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Messages to clients. Orders (evict, return) carry an id, a deadline and a
 * chunk range, and stay outstanding until acknowledged, failed, expired or
 * cancelled by a free. Notices (settled, advice) are dropped once read.
 * Adjacent chunks chosen in one decision merge into one order.
 *
 * A client that lets an order expire is stalled until it is heard again:
 * a deaf agent and a suspended job look the same from here, and neither
 * may keep its neighbours off their share. Its expired evictions are
 * forfeited (chunk.c), and it is sent no more orders meanwhile.
 */
#include "internal.h"

static struct gos_msg *msg_new(struct gos_engine *eng)
{
	(void)eng;
	return gos_os_zalloc(sizeof(struct gos_msg));
}

static void msg_init_links(struct gos_msg *msg)
{
	gos_list_init(&msg->client_node);
	gos_list_init(&msg->buf_node);
	gos_list_init(&msg->pending_node);
}

/*
 * Whether chunk c joins the client's last unread message, tail: one of the
 * same kind and expiry for the chunks just before c in c's buffer (buffer
 * ids are never reused).
 */
static bool joins(struct gos_client *cl, struct gos_chunk *c, u32 kind,
		  bool expired, u64 bytes)
{
	struct gos_msg *tail;

	if (gos_list_empty(&cl->outbox))
		return false;
	tail = gos_list_last(&cl->outbox, struct gos_msg, client_node);
	if (tail->m.kind != kind || tail->expired != expired ||
	    tail->m.buffer != c->buf->id ||
	    tail->first + tail->count != c->index)
		return false;
	tail->count++;
	tail->m.length += bytes;
	return true;
}

/* A new message of kind for chunk c, the first of its range. */
static struct gos_msg *order_new(struct gos_engine *eng, struct gos_chunk *c,
				 u32 kind, u64 bytes)
{
	struct gos_msg *msg = msg_new(eng);

	if (!msg)
		return NULL;
	msg_init_links(msg);
	msg->m.id = ++eng->next_order;
	msg->m.kind = kind;
	msg->m.tenant = c->buf->tenant->id;
	msg->m.buffer = c->buf->id;
	msg->m.offset = (u64)c->index * eng->cfg.chunk_size;
	msg->m.length = bytes;
	msg->first = c->index;
	msg->count = 1;
	return msg;
}

/* Moves chunk c into the in-flight state of kind and orders its owner. */
int gos_order_add(struct gos_engine *eng, struct gos_chunk *c, u32 kind)
{
	struct gos_buffer *buf = c->buf;
	struct gos_client *cl = buf->client;
	u64 bytes = gos_chunk_size(eng, c);
	struct gos_msg *msg;

	if (joins(cl, c, kind, false, bytes))
		goto move;
	if (gos_idmap_reserve(&eng->orders))
		return -ENOMEM;
	msg = order_new(eng, c, kind, bytes);
	if (!msg)
		return -ENOMEM;
	msg->buf = buf;
	msg->deadline = gos_now(eng) + eng->cfg.order_timeout_ns;
	gos_idmap_put(&eng->orders, msg->m.id, msg);
	gos_list_add_tail(&msg->client_node, &cl->outbox);
	gos_list_add_tail(&msg->buf_node, &buf->orders);
	gos_list_add_tail(&msg->pending_node, &eng->pending);
	eng->npending++;
move:
	gos_chunk_set(eng, c, kind == GOS_MSG_EVICT ? GOS_CHUNK_EVICTING
						   : GOS_CHUNK_RETURNING);
	return 0;
}

/*
 * Tells a stalled client of a chunk the reducer took without asking it: an
 * eviction order born expired. Queued after whatever the client has not
 * read, it is read in order, so no older notice undoes it; carrying it out
 * moves the range to the host, and the answer (-ENOENT) makes the agent
 * put its buffers where the engine says. Adjacent chunks merge.
 */
int gos_order_forfeited(struct gos_engine *eng, struct gos_chunk *c)
{
	struct gos_client *cl = c->buf->client;
	u64 bytes = gos_chunk_size(eng, c);
	struct gos_msg *msg;

	if (joins(cl, c, GOS_MSG_EVICT, true, bytes))
		return 0;
	msg = order_new(eng, c, GOS_MSG_EVICT, bytes);
	if (!msg)
		return -ENOMEM;
	msg->expired = true;
	gos_list_add_tail(&msg->client_node, &cl->outbox);
	return 0;
}

int gos_notice(struct gos_engine *eng, struct gos_client *cl,
	       const struct gos_message *m)
{
	struct gos_msg *msg = msg_new(eng);

	if (!msg)
		return -ENOMEM;
	msg_init_links(msg);
	msg->m = *m;
	gos_list_add_tail(&msg->client_node, &cl->outbox);
	return 0;
}

/* Unlinks an order from every list and frees it; chunks are the caller's. */
static void order_forget(struct gos_engine *eng, struct gos_msg *msg)
{
	if (gos_list_linked(&msg->client_node))
		gos_list_del(&msg->client_node);
	gos_list_del(&msg->buf_node);
	gos_list_del(&msg->pending_node);
	gos_idmap_del(&eng->orders, msg->m.id);
	eng->npending--;
	gos_os_free(msg);
}

/*
 * The chunks of an order that ends. Success completes the move; failure
 * puts the chunks back where they were and pins them, so the same decision
 * is not retried at once against a client that cannot carry it out.
 */
static void order_finish(struct gos_engine *eng, struct gos_msg *msg,
			 bool ok, u8 pin)
{
	struct gos_buffer *buf = msg->buf;
	struct gos_tenant *t = buf->tenant;
	bool evict = msg->m.kind == GOS_MSG_EVICT;
	u8 inflight = evict ? GOS_CHUNK_EVICTING : GOS_CHUNK_RETURNING;
	u8 done = evict ? GOS_CHUNK_HOST : GOS_CHUNK_DEVICE;
	u8 back = evict ? GOS_CHUNK_DEVICE : GOS_CHUNK_HOST;
	u32 i;

	for (i = msg->first; i < msg->first + msg->count; i++) {
		struct gos_chunk *c = &buf->chunks[i];
		u64 bytes = gos_chunk_size(eng, c);

		if (c->state != inflight)
			continue;
		if (ok) {
			gos_chunk_set(eng, c, done);
			if (evict) {
				t->st.bytes_evicted += bytes;
				t->st.evictions++;
			} else {
				t->st.bytes_returned += bytes;
				t->st.returns++;
			}
		} else {
			c->pin = pin;
			gos_chunk_set(eng, c, back);
		}
	}
}

/*
 * An expired order its client has not read stays queued, tied to nothing
 * else: reading it and answering (-ENOENT) is how the client learns that
 * the engine decided without it, and puts its buffers back where the engine
 * says. One it has read is forgotten, its answer gets -ENOENT alike.
 */
static void order_retire(struct gos_engine *eng, struct gos_msg *msg)
{
	if (!gos_list_linked(&msg->client_node)) {
		order_forget(eng, msg);
		return;
	}
	gos_list_del(&msg->buf_node);
	gos_list_del(&msg->pending_node);
	gos_idmap_del(&eng->orders, msg->m.id);
	eng->npending--;
	msg->buf = NULL;
	msg->expired = true;
}

/*
 * Ends an order its client let expire. An eviction's chunks are forfeited;
 * a return's go back to the host, pinned, and free the room kept for them.
 */
static void order_expire(struct gos_engine *eng, struct gos_msg *msg)
{
	struct gos_buffer *buf = msg->buf;
	u32 i;

	buf->client->stalled = true;
	buf->tenant->st.expired_orders++;
	if (msg->m.kind != GOS_MSG_EVICT)
		order_finish(eng, msg, false, GOS_PIN_STALLED);
	else
		for (i = msg->first; i < msg->first + msg->count; i++)
			if (buf->chunks[i].state == GOS_CHUNK_EVICTING)
				gos_chunk_forfeit(eng, &buf->chunks[i]);
	order_retire(eng, msg);
}

static struct gos_msg *client_order(struct gos_engine *eng,
				    struct gos_client *cl, u64 id)
{
	struct gos_msg *msg = gos_idmap_get(&eng->orders, id);

	return msg && msg->buf->client == cl ? msg : NULL;
}

/*
 * After a failure, waiting chunks may no longer be coverable; after an
 * expiry, forfeited chunks make room for them.
 */
static void after_failure(struct gos_engine *eng, struct gos_gpu *gpu)
{
	gos_fit_capacity(eng, gpu);
	gos_trim_waiting(eng, gpu);
}

static int order_done(struct gos_engine *eng, struct gos_client *cl, u64 id,
		      bool ok)
{
	struct gos_msg *msg = client_order(eng, cl, id);
	struct gos_gpu *gpu;

	/* Any word from a stalled client shows it is alive again. */
	gos_client_resume(eng, cl);
	if (!msg)
		return -ENOENT;
	gpu = msg->buf->tenant->gpu;
	if (!ok)
		msg->buf->tenant->st.failed_orders++;
	order_finish(eng, msg, ok, GOS_PIN_FAILED);
	order_forget(eng, msg);
	if (ok) {
		/* A return that lands after the GPU shrank may leave it over. */
		gos_fit_capacity(eng, gpu);
		gos_settle(eng, gpu);
	} else {
		after_failure(eng, gpu);
	}
	return 0;
}

void gos_orders_expire(struct gos_engine *eng)
{
	u64 now = gos_now(eng);

	while (!gos_list_empty(&eng->pending)) {
		struct gos_msg *msg = gos_list_first(&eng->pending,
						     struct gos_msg,
						     pending_node);
		struct gos_gpu *gpu = msg->buf->tenant->gpu;

		if (msg->deadline > now)
			break;
		order_expire(eng, msg);
		after_failure(eng, gpu);
	}
}

/* A buffer being freed takes its orders with it; its chunks go too. */
void gos_orders_cancel_buffer(struct gos_engine *eng, struct gos_buffer *buf)
{
	while (!gos_list_empty(&buf->orders))
		order_forget(eng, gos_list_first(&buf->orders, struct gos_msg,
						 buf_node));
}

/* Drops unread notices of an exiting client; its orders went with its buffers. */
void gos_msg_drop_client(struct gos_engine *eng, struct gos_client *cl)
{
	(void)eng;
	while (!gos_list_empty(&cl->outbox)) {
		struct gos_msg *msg = gos_list_first(&cl->outbox,
						     struct gos_msg,
						     client_node);

		gos_list_del(&msg->client_node);
		gos_os_free(msg);
	}
}

int gos_read_messages(struct gos_engine *eng, u32 client,
		      struct gos_message *out, u32 max)
{
	struct gos_client *cl;
	u32 n = 0;

	gos_os_lock(eng->lock);
	cl = gos_idmap_get(&eng->clients, client);
	if (!cl || (max && !out)) {
		gos_os_unlock(eng->lock);
		return -EINVAL;
	}
	while (n < max && !gos_list_empty(&cl->outbox)) {
		struct gos_msg *msg = gos_list_first(&cl->outbox,
						     struct gos_msg,
						     client_node);

		out[n++] = msg->m;
		gos_list_del(&msg->client_node);
		if (!msg->m.id || msg->expired)
			gos_os_free(msg);	/* a read order stays pending */
	}
	gos_os_unlock(eng->lock);
	return (int)n;
}

static int order_reply(struct gos_engine *eng, u32 client, u64 order, bool ok)
{
	struct gos_client *cl;
	int err;

	gos_os_lock(eng->lock);
	cl = gos_idmap_get(&eng->clients, client);
	err = cl ? order_done(eng, cl, order, ok) : -EINVAL;
	gos_os_unlock(eng->lock);
	return err;
}

int gos_client_heard(struct gos_engine *eng, u32 client)
{
	struct gos_client *cl;

	gos_os_lock(eng->lock);
	cl = gos_idmap_get(&eng->clients, client);
	if (cl)
		gos_client_resume(eng, cl);
	gos_os_unlock(eng->lock);
	return cl ? 0 : -EINVAL;
}

int gos_order_ack(struct gos_engine *eng, u32 client, u64 order)
{
	return order_reply(eng, client, order, true);
}

int gos_order_fail(struct gos_engine *eng, u32 client, u64 order)
{
	return order_reply(eng, client, order, false);
}
