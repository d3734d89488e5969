/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The gpuoversub eviction engine: GPUswap's chunked accounting, reducer and
 * return planner, with weighted entitlements and a PILOT-style throttle.
 *
 * The engine never touches GPU memory. It keeps the ledger of who holds what
 * on which GPU and tells clients (the agents in each process) what to move,
 * through orders they acknowledge. Every entry point takes the engine lock,
 * so one engine may be shared by many threads.
 *
 * All functions return 0 or a negative Linux errno value.
 */
#ifndef GOS_ENGINE_H
#define GOS_ENGINE_H

#include "gos_types.h"
/* struct gos_tenant_stats, and the orders clients read (gos_wire_order). */
#include <gpuoversub/abi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GOS_PRIO_MIN 0		/* evicted first */
#define GOS_PRIO_MAX 15		/* evicted last */
#define GOS_PRIO_DEFAULT 8
#define GOS_NPRIO (GOS_PRIO_MAX + 1)

#define GOS_CHUNK_MIN (64u << 10)
#define GOS_CHUNK_DEFAULT (2u << 20)

/* How entitlements are set. */
enum gos_fairness {
	GOS_FAIR_WEIGHTED,	/* weighted max-min water-filling over demand */
	GOS_FAIR_FCFS,		/* baseline: first come, first served, no moves */
	GOS_FAIR_STATIC,	/* baseline: fixed weighted partitions */
};

/* Which tenant gives up memory. */
enum gos_victim {
	GOS_VICTIM_EXCESS,	/* largest resident bytes over entitlement */
	GOS_VICTIM_RESIDENT,	/* largest resident bytes (GPUswap) */
	GOS_VICTIM_LRU,		/* oldest chunk on the GPU, any tenant (UVM-like) */
};

/* Which chunk of the victim goes. */
enum gos_select {
	GOS_SELECT_PRIORITY,	/* lowest-priority bucket, random inside it */
	GOS_SELECT_RANDOM,	/* any chunk of the victim */
};

enum gos_chunk_state {
	GOS_CHUNK_DEVICE,	/* on the GPU */
	GOS_CHUNK_HOST,		/* in host RAM, mapped for the GPU */
	GOS_CHUNK_EVICTING,	/* evict order outstanding; still occupies the GPU */
	GOS_CHUNK_RETURNING,	/* return order outstanding; GPU space reserved */
	GOS_CHUNK_WAITING,	/* new chunk waiting for an eviction to finish */
};

enum gos_msg_kind {
	GOS_MSG_EVICT = 1,	/* move range to host, then ack or fail */
	GOS_MSG_RETURN,		/* move range to the device, then ack or fail */
	GOS_MSG_SETTLED,	/* a notice: a buffer's waiting chunks, */
				/* [offset, offset + length), are all placed: */
				/* the first device_bytes on the device, the */
				/* last host_bytes on the host */
	GOS_MSG_ADVICE,		/* tenant throttled: stays oversubscribed */
};

struct gos_config {
	u32 chunk_size;		/* bytes; >= GOS_CHUNK_MIN, multiple of 4096 */
	u32 fairness;		/* enum gos_fairness */
	u32 victim;		/* enum gos_victim */
	u32 select;		/* enum gos_select */
	u64 order_timeout_ns;	/* unacknowledged orders fail after this */
	u64 throttle_persist_ns; /* oversubscribed this long => throttled; 0 = never */
	u64 return_batch_bytes;	/* most bytes one planner run moves; 0 = no cap */
	/*
	 * Lending backoff. Memory returned to a tenant beyond its weighted
	 * share is a loan; a loan revoked within lend_backoff_ns of being made
	 * stops further loans to that tenant for lend_backoff_ns, doubling with
	 * each quick revocation up to lend_backoff_max_ns, and halving for each
	 * lend_backoff_ns a later loan lasts. 0 = lend again at once.
	 */
	u64 lend_backoff_ns;
	u64 lend_backoff_max_ns; /* >= lend_backoff_ns */
	u64 seed;		/* random source; 0 = seed from the OS */
	/* Clock in ns; NULL = the OS monotonic clock. Simulators drive their own. */
	u64 (*clock)(void *ctx);
	void *clock_ctx;
};

void gos_config_defaults(struct gos_config *cfg);

/*
 * Where a new buffer's chunks are, in this order: its first device_bytes on
 * the GPU, the next waiting_bytes waiting for space (kept in host RAM until
 * GOS_MSG_SETTLED), its last host_bytes in host RAM. Nothing else need be
 * asked (gos_buffer_placement) to place it.
 */
struct gos_alloc_result {
	u64 buffer;		/* handle for free, priority and orders */
	u64 device_bytes;
	u64 host_bytes;
	u64 waiting_bytes;
};

/* One record read by a client. Ranges are byte offsets into the buffer. */
struct gos_message {
	u64 id;			/* order id to ack or fail; 0 for notices */
	u32 kind;		/* enum gos_msg_kind */
	u32 tenant;
	u64 buffer;
	u64 offset;
	u64 length;
	u64 device_bytes;	/* SETTLED: the range's split; ADVICE: the tenant's */
	u64 host_bytes;
	u64 entitlement;	/* ADVICE: the tenant's fair share */
	u64 oversub_ns;		/* ADVICE: the tenant's time with bytes in host RAM */
};

struct gos_engine;

int gos_engine_create(const struct gos_config *cfg, struct gos_engine **out);
void gos_engine_destroy(struct gos_engine *eng);

int gos_gpu_add(struct gos_engine *eng, u32 gpu, u64 physical, u64 reserve);
/* Memory used outside the engine; the engine evicts to fit what remains. */
int gos_gpu_set_external(struct gos_engine *eng, u32 gpu, u64 bytes);
int gos_gpu_get_stats(struct gos_engine *eng, u32 gpu, struct gos_gpu_stats *out);

/* weight >= 1; limit caps the tenant's total allocation, 0 = no cap. */
int gos_tenant_create(struct gos_engine *eng, u32 gpu, u32 weight, u64 limit,
		      u32 *tenant);
int gos_tenant_set_policy(struct gos_engine *eng, u32 tenant, u32 weight,
			  u64 limit);
/*
 * Guarantees the tenant min(demand, bytes) before water-filling the rest;
 * minimums are scaled down together if they exceed the GPU.
 */
int gos_tenant_set_min(struct gos_engine *eng, u32 tenant, u64 bytes);
/*
 * Caps how many buffers the tenant may hold at once, 0 = no cap: one
 * allocation more fails with -ENOBUFS. Buffers held stay when it drops.
 */
int gos_tenant_set_max_buffers(struct gos_engine *eng, u32 tenant, u32 most);
/*
 * GPU memory the tenant's processes hold outside the engine (seen through
 * NVML: no agent in them): it counts as the tenant's own unevictable bytes,
 * so that its share pays for it; what no longer fits is evicted, the
 * furthest over its entitlement first, as for an unevictable allocation.
 */
int gos_tenant_set_unmanaged(struct gos_engine *eng, u32 tenant, u64 bytes);
/* Fails with -EBUSY while the tenant still holds buffers. */
int gos_tenant_destroy(struct gos_engine *eng, u32 tenant);
int gos_tenant_get_stats(struct gos_engine *eng, u32 tenant,
			 struct gos_tenant_stats *out);
/*
 * Up to max tenant ids into ids, in no order; returns how many tenants
 * there are, which may be more than max.
 */
int gos_tenant_list(struct gos_engine *eng, u32 *ids, u32 max);

int gos_client_create(struct gos_engine *eng, u32 *client);
/* Frees everything the client holds and schedules returns for others. */
int gos_client_exit(struct gos_engine *eng, u32 client);

#define GOS_ALLOC_UNEVICTABLE 0x1u	/* counted, never moved */
#define GOS_ALLOC_AGAIN 0x2u		/* registered again: not a new allocation in the stats */

/*
 * -EDQUOT: over the tenant's limit. -ENOBUFS: the tenant holds the most
 * buffers its cap allows. -ENOSPC: unevictable bytes beyond the tenant's
 * weighted share of the GPU (or its minimum), which would hold others below
 * their entitlement. -EFBIG: more chunks than one buffer counts (2^32 - 1).
 */
int gos_alloc(struct gos_engine *eng, u32 client, u32 tenant, u64 size,
	      u32 prio, u32 flags, struct gos_alloc_result *res);
int gos_free(struct gos_engine *eng, u32 client, u64 buffer);
int gos_set_priority(struct gos_engine *eng, u32 client, u64 buffer,
		     u64 offset, u64 length, u32 prio);
/* State of chunks [first, first + count) as enum gos_chunk_state values. */
int gos_buffer_placement(struct gos_engine *eng, u32 client, u64 buffer,
			 u32 first, u32 count, u8 *states);

/*
 * Reads up to max pending messages; returns how many, or -errno. A message
 * may name a buffer freed after it was queued; clients ignore those.
 * Reading is not hearing from the client: the daemon reads on its agents'
 * behalf.
 */
int gos_read_messages(struct gos_engine *eng, u32 client,
		      struct gos_message *out, u32 max);
/*
 * The order a client reads for m, written once for the module and the
 * daemon. gpu: the index of m's tenant among the GPUs of the reader's job.
 * numa_node is -1: the caller may know the host's topology.
 */
void gos_order_of_message(const struct gos_message *m, u32 gpu,
			  struct gos_wire_order *o);
/* The engine's GOS_ALLOC_* for an agent's GOS_ALLOC_FLAG_*; -EINVAL for a flag the ABI lacks. */
int gos_alloc_flags_of_wire(u32 wire, u32 *flags);
/*
 * A client that lets an order expire is stalled: its expired evictions and
 * whatever the reducer would have ordered it to move are counted in host
 * RAM (the driver evicts managed memory itself), and its new buffers start
 * there. It is un-stalled when it answers an order (even an expired one,
 * which gets -ENOENT) or when gos_client_heard() says it spoke: the module
 * calls it when the agent reads its orders itself.
 */
int gos_client_heard(struct gos_engine *eng, u32 client);
int gos_order_ack(struct gos_engine *eng, u32 client, u64 order);
int gos_order_fail(struct gos_engine *eng, u32 client, u64 order);

/* Periodic work: order timeouts, throttle, rebalance and returns. */
int gos_tick(struct gos_engine *eng);

/*
 * Weighted max-min water-filling: shares cap among n tenants so that no
 * tenant gets more than it demands and the rest is split by weight.
 * Exposed so tools can compute the same reference shares as the engine.
 */
void gos_waterfill(u32 n, const u64 *demand, const u32 *weight, u64 cap,
		   u64 *share);

/*
 * Walks every object and checks the ledger's invariants. O(all chunks):
 * for tests and debugging only. Writes the first violation into msg.
 */
int gos_check(struct gos_engine *eng, char *msg, size_t len);

/*
 * Checks what must hold once no order is outstanding and gos_tick() has
 * nothing left to do: no chunk's worth of device memory lies idle while a
 * tenant entitled to it has movable data on the host (utilization), and no
 * tenant stays a chunk
 * or more below its share while another holds a chunk or more above its
 * share that could move (fairness).
 */
int gos_check_at_rest(struct gos_engine *eng, char *msg, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* GOS_ENGINE_H */
