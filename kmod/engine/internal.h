/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* Engine objects shared by the engine's source files; not a public API. */
#ifndef GOS_INTERNAL_H
#define GOS_INTERNAL_H

#include "gos_engine.h"
#include "gos_os.h"
#include "idmap.h"
#include "list.h"
#include "vec.h"

#define GOS_WEIGHT_MAX 65535u
/* Keeps weight * bytes inside 64 bits in the water-filling. */
#define GOS_BYTES_MAX ((u64)1 << 48)	/* 256 TiB */
#define GOS_CHUNKS_MAX ((u64)0xffffffffu)	/* one buffer's, in its u32 count */

/* A chunk not yet placed, or being freed: counted nowhere. */
#define GOS_CHUNK_NONE 0xff

enum gos_pin {
	GOS_PIN_NONE,
	GOS_PIN_FAILED,		/* client failed an order; until priority reset */
	GOS_PIN_STALLED,	/* client let an order expire; until it is heard */
};

struct gos_buffer;

struct gos_chunk {
	struct gos_buffer *buf;
	struct gos_list lru;	/* GPU-wide age order while selectable on device */
	u32 index;		/* within the buffer */
	u32 pos;		/* slot in its priority bucket */
	u8 state;		/* enum gos_chunk_state */
	u8 prio;
	u8 pin;			/* enum gos_pin */
	u8 in_bucket;
};

/* Selectable chunks of one tenant in one place, bucketed by priority. */
struct gos_buckets {
	struct gos_vec b[GOS_NPRIO];
	u32 mask;		/* bit p set while bucket p is non-empty */
	u32 count;
};

/* Lending backoff of one tenant (lend.c). */
struct gos_loan {
	bool open;		/* returned memory beyond its share ... */
	u64 at;			/* ... last at this time */
	u64 backoff_ns;		/* the wait set by the last quick revocation */
	u64 lend_after;		/* no loans before this time */
};

struct gos_gpu;

struct gos_tenant {
	u32 id;
	u32 weight;
	u64 limit;
	u64 min_bytes;		/* guaranteed share, if demanded */
	struct gos_gpu *gpu;
	u32 slot;		/* index in gpu->tenants */
	u32 buffers;
	u32 max_buffers;	/* 0 = no cap */
	u64 demand;
	u64 resident;		/* DEVICE + EVICTING + RETURNING + unevictable */
	u64 evicting;
	u64 host;
	u64 unevictable;	/* its buffers' and its unmanaged bytes */
	u64 unmanaged;		/* its processes' outside any buffer (NVML) */
	u64 entitlement;
	u64 share;		/* weighted share of capacity, or min_bytes if more */
	struct gos_loan loan;
	struct gos_buckets dev;	/* DEVICE chunks that may be evicted */
	struct gos_buckets hst;	/* HOST chunks that may be returned */
	u32 nprio[GOS_NPRIO];	/* chunks per priority, any state: bucket sizing */
	s64 key;		/* scratch: heap key during one decision */
	struct gos_list buffer_list;	/* its buffers, for advice */
	bool throttled;
	bool over;		/* demand above entitlement ... */
	u64 over_since;		/* ... since this time */
	/*
	 * Its statistics' peaks and counters accumulate here, in the record
	 * tenant_stats.def generates; its other fields are the tenant's own,
	 * set when the record is read (gos_tenant_get_stats).
	 */
	struct gos_tenant_stats st;
	bool oversub_open;	/* has bytes in host RAM ... */
	u64 oversub_since;	/* ... since this time: st.oversub_ns to come */
};

struct gos_gpu {
	u32 id;
	u64 physical, reserve, external;
	u64 used;		/* sum of tenants' resident */
	u64 evicting;
	u64 waiting;
	bool entitlement_dirty;
	struct gos_vec tenants;
	/* water-filling scratch, sized with tenants */
	u64 *wf_demand, *wf_share, *wf_min;
	u32 *wf_weight;
	u32 wf_len;
	struct gos_list waitq;	/* buffers with WAITING chunks, oldest first */
	struct gos_list lru;	/* selectable DEVICE chunks, oldest first */
};

struct gos_client {
	u32 id;
	bool stalled;
	u64 mark;		/* visits each client once while walking a tenant */
	struct gos_list buffers;
	struct gos_list outbox;	/* undelivered messages */
};

struct gos_buffer {
	u64 id;
	struct gos_client *client;
	struct gos_tenant *tenant;
	struct gos_list client_node;
	struct gos_list tenant_node;
	struct gos_list wait_node;
	struct gos_list orders;	/* outstanding orders on this buffer */
	u64 size;
	u32 nchunks;		/* 0 for unevictable buffers */
	u32 nwaiting;
	u32 wait_head, wait_tail; /* WAITING chunks lie within [head, tail) */
	u32 wait_first;		/* the first chunk that waited: SETTLED's offset */
	u64 waited_device, waited_host; /* where waiting chunks went */
	struct gos_chunk chunks[];
};

struct gos_msg {
	struct gos_message m;
	struct gos_buffer *buf;	/* orders only */
	u32 first, count;	/* chunk range of an order */
	u64 deadline;
	bool expired;		/* unread when it expired: a queued notice now */
	struct gos_list client_node;	/* in client outbox until read */
	struct gos_list buf_node;	/* orders: in buffer->orders */
	struct gos_list pending_node;	/* orders: engine-wide by deadline */
};

struct gos_engine {
	struct gos_config cfg;
	struct gos_os_lock *lock;
	u64 rng;
	u32 next_tenant, next_client;
	u64 next_buffer, next_order;
	u64 next_mark;			/* gos_tenant_each_client's walks */
	struct gos_idmap gpus, tenants, clients, buffers, orders;
	struct gos_list pending;	/* outstanding orders, oldest first */
	u32 npending;
	struct gos_vec heap;		/* scratch tenant heap */
};

static inline u64 gos_now(struct gos_engine *eng)
{
	return eng->cfg.clock ? eng->cfg.clock(eng->cfg.clock_ctx)
			      : gos_os_now_ns();
}

static inline u64 gos_capacity(const struct gos_gpu *gpu)
{
	u64 taken = gpu->reserve + gpu->external;

	return gpu->physical > taken ? gpu->physical - taken : 0;
}

static inline u64 gos_free_now(const struct gos_gpu *gpu)
{
	u64 cap = gos_capacity(gpu);

	return cap > gpu->used ? cap - gpu->used : 0;
}

/*
 * Free space once every eviction in flight lands. Negative while the GPU
 * is over capacity by more than is on its way out.
 */
static inline s64 gos_coming_free(const struct gos_gpu *gpu)
{
	return (s64)gos_capacity(gpu) - (s64)gpu->used + (s64)gpu->evicting;
}

/* Chunks are chunk_size long except a shorter remainder chunk at the end. */
static inline u64 gos_chunk_size(const struct gos_engine *eng,
				 const struct gos_chunk *c)
{
	u64 start = (u64)c->index * eng->cfg.chunk_size;
	u64 left = c->buf->size - start;

	return left < eng->cfg.chunk_size ? left : eng->cfg.chunk_size;
}

u64 gos_rand(struct gos_engine *eng);
u32 gos_rand_below(struct gos_engine *eng, u32 bound);

/* gpu.c, tenant.c, client.c, buffer.c: each object's lookup and release */
struct gos_gpu *gos_gpu_get(struct gos_engine *eng, u32 id);
void gos_gpu_release(struct gos_gpu *gpu);
void gos_gpu_after_free(struct gos_engine *eng, struct gos_gpu *gpu);
void gos_gpu_after_shrink(struct gos_engine *eng, struct gos_gpu *gpu);
void gos_tenant_release(struct gos_engine *eng, struct gos_tenant *t);
/*
 * Bytes on the tenant's GPU that never move (an unevictable buffer, its
 * processes' memory outside the engine): pinned, they count resident and
 * unevictable, and others make room if the GPU is now over; unpinned, the
 * caller plans what the room allows.
 */
void gos_tenant_pin(struct gos_engine *eng, struct gos_tenant *t, u64 bytes);
void gos_tenant_unpin(struct gos_tenant *t, u64 bytes);
/* Calls fn once for each client holding a buffer of t. */
void gos_tenant_each_client(struct gos_engine *eng, struct gos_tenant *t,
			    void (*fn)(struct gos_client *cl, void *ctx),
			    void *ctx);
void gos_client_release(struct gos_engine *eng, struct gos_client *cl);
void gos_buffer_release(struct gos_engine *eng, struct gos_buffer *buf);

/* buckets.c */
int gos_tenant_reserve_prio(struct gos_tenant *t, u32 prio, u32 extra);
void gos_buckets_add(struct gos_buckets *bk, struct gos_chunk *c);
void gos_buckets_del(struct gos_buckets *bk, struct gos_chunk *c);
struct gos_chunk *gos_buckets_pick(struct gos_engine *eng,
				   struct gos_buckets *bk, bool lowest,
				   bool random);
void gos_buckets_release(struct gos_buckets *bk);

/* chunk.c: every chunk state change goes through here */
void gos_chunk_set(struct gos_engine *eng, struct gos_chunk *c, u8 state);
void gos_chunk_set_pin(struct gos_engine *eng, struct gos_chunk *c, u8 pin);
void gos_chunk_set_prio(struct gos_engine *eng, struct gos_chunk *c, u8 prio);
void gos_chunk_forfeit(struct gos_engine *eng, struct gos_chunk *c);
void gos_tenant_note_host(struct gos_engine *eng, struct gos_tenant *t);
u64 gos_tenant_oversub_ns(struct gos_engine *eng, const struct gos_tenant *t);

/* entitle.c */
void gos_entitle(struct gos_engine *eng, struct gos_gpu *gpu);

/* heap.c: binary heap of tenants by t->key, largest first */
void gos_heap_init(struct gos_vec *heap);
void gos_heap_push(struct gos_vec *heap, struct gos_tenant *t);
struct gos_tenant *gos_heap_top(struct gos_vec *heap);
void gos_heap_pop(struct gos_vec *heap);
void gos_heap_fix_top(struct gos_vec *heap);

/* orders.c */
int gos_order_add(struct gos_engine *eng, struct gos_chunk *c, u32 kind);
int gos_order_forfeited(struct gos_engine *eng, struct gos_chunk *c);
int gos_notice(struct gos_engine *eng, struct gos_client *cl,
	       const struct gos_message *m);
void gos_orders_expire(struct gos_engine *eng);
void gos_orders_cancel_buffer(struct gos_engine *eng, struct gos_buffer *buf);
void gos_msg_drop_client(struct gos_engine *eng, struct gos_client *cl);
void gos_client_resume(struct gos_engine *eng, struct gos_client *cl);

/* reduce.c: the new buffer's chunks that have no place yet */
/* A new buffer's chunks the reducer may still send to the host: [0, n). */
struct gos_unplaced {
	struct gos_buffer *buf;
	u32 n;
	u64 bytes;
};

void gos_reduce(struct gos_engine *eng, struct gos_gpu *gpu,
		struct gos_unplaced *unplaced, s64 need, bool only_excess);
void gos_fit_capacity(struct gos_engine *eng, struct gos_gpu *gpu);

/* waitq.c */
void gos_settle(struct gos_engine *eng, struct gos_gpu *gpu);
void gos_trim_waiting(struct gos_engine *eng, struct gos_gpu *gpu);

/* lend.c */
u64 gos_lend_ceiling(const struct gos_tenant *t, u64 now);
bool gos_lend_waiting(const struct gos_tenant *t, u64 now);
void gos_lend_returned(struct gos_engine *eng, struct gos_tenant *t, u64 now);
void gos_lend_revoked(struct gos_engine *eng, struct gos_tenant *t);

/* returns.c */
void gos_plan_returns(struct gos_engine *eng, struct gos_gpu *gpu);
void gos_gpu_tick(struct gos_engine *eng, struct gos_gpu *gpu);

#endif /* GOS_INTERNAL_H */
