/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * gpuoversub wire ABI: the messages between agents, the SPANK plugin,
 * gpuoversubctl and the node daemon, framed on a Unix stream socket; and,
 * below it, the kernel module's ioctl ABI (/dev/gpuoversub and
 * /dev/gpuoversub-control).
 *
 * The requests, their numbers, payloads, replies, callers and caps are one
 * table, requests.def. The ioctls have structs of their own (gos_ioc_*),
 * but carry some of the wire's: GOS_IOC_FREE takes gos_req_buffer,
 * GOS_IOC_PRIORITY gos_req_priority, and read() returns gos_wire_order
 * records; gos_tenant_stats and gos_gpu_stats are the engine's own records.
 *
 * Wire versions (GOS_WIRE_VERSION; a peer of another version is told why
 * and cut off):
 *   1  the first.
 *   2  gos_wire_order.oversub_ns: the advice's duration in a field of its own.
 *   3  gos_req_step carries the step's shards; EXPLAIN (19). REQUESTS (20)
 *      came later without a new version: an older daemon refuses it as an
 *      unknown type, and nothing older changed.
 * Kernel ABI versions (GOS_KABI_VERSION): 2 as wire 2; 3 gos_gpu_stats is
 * the engine's record; 4 GOS_IOC_TENANT_BUFFERS; 5 gos_tenant_stats gains
 * clients, stalled_clients, expired_orders and bytes_forfeited; 6 the
 * daemon's calls move to /dev/gpuoversub-control, granted by its
 * permissions rather than CAP_SYS_ADMIN; 7 GOS_IOC_TENANT_UNMANAGED, and
 * gos_tenant_stats gains unmanaged and peak_unmanaged.
 *
 * Every frame is a gos_wire_hdr followed by `length` payload bytes. All
 * integers are little-endian host order (the socket never leaves the node),
 * every struct has explicit padding, and strings are NUL-terminated within
 * their arrays. A request's reply has type GOS_WIRE_REPLY and the request's
 * seq; the daemon also pushes GOS_WIRE_ORDER frames (seq 0) to agents, and a
 * reply of seq 0 before it closes a connection says why.
 */
#ifndef GPUOVERSUB_ABI_H
#define GPUOVERSUB_ABI_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define GOS_WIRE_MAGIC 0x31534f47u	/* "GOS1" */
#define GOS_WIRE_VERSION 3
#define GOS_WIRE_MAX_PAYLOAD (1u << 20)	/* JSON replies included */
#define GOS_NAME_LEN 64

enum gos_wire_type {
#define GOS_REQUEST(NAME, name, number, ...) GOS_REQ_##NAME = number,
#include "requests.def"
#undef GOS_REQUEST
	GOS_WIRE_REPLY = 0x100,		/* gos_reply, then the reply payload */
	GOS_WIRE_ORDER = 0x101,		/* pushed to agents: gos_wire_order */
};

/* The highest request number: requests.def numbers its rows 1, 2, ... in
 * order (common/proto/requests.cpp asserts it). */
enum {
	GOS_REQ_MAX = 0
#define GOS_REQUEST(...) + 1
#include "requests.def"
#undef GOS_REQUEST
};

struct gos_wire_hdr {
	__u32 magic;
	__u16 version;
	__u16 type;
	__u32 seq;
	__u32 length;
};

struct gos_reply {
	__s32 status;			/* 0 or -errno */
	__u32 length;			/* reply payload bytes after this struct */
	char error[128];		/* why, for people, when status < 0 */
};

struct gos_req_hello {
	__u32 pid;			/* the connecting process, as it sees itself */
	__s32 rank;			/* MPI rank or -1 */
	__s32 local_rank;
	__u32 world_size;
	__u64 job_id;			/* job the agent believes it is in; 0 = ask */
};

/*
 * KERNEL: the node's engine is gpuoversub.ko. The agent then allocates,
 * frees, sets priorities, asks placements and reads and acknowledges orders
 * on /dev/gpuoversub; hello, meminfo, activity and ranks stay on the socket.
 */
#define GOS_HELLO_FLAG_KERNEL 0x1u

struct gos_rep_hello {
	__u64 job_id;
	__u32 client;			/* 0 with GOS_HELLO_FLAG_KERNEL */
	__u32 ngpus;			/* GPUs of the job, indexed 0.. in its view */
	__u64 chunk_size;
	__u32 flags;			/* GOS_HELLO_FLAG_* */
	__u32 pad;
};

#define GOS_ALLOC_FLAG_UNEVICTABLE 0x1u
/* A buffer the agent had registered before, registered again after its link
 * to the engine was lost (a daemon restart): accounted as before, but not
 * counted as a new allocation in the job's figures. */
#define GOS_ALLOC_FLAG_AGAIN 0x2u
#define GOS_ALLOC_FLAGS_KNOWN (GOS_ALLOC_FLAG_UNEVICTABLE | GOS_ALLOC_FLAG_AGAIN)

struct gos_req_alloc {
	__u32 gpu;			/* index among the job's GPUs */
	__u32 priority;			/* 0 (evicted first) .. 15 */
	__u32 flags;
	__u32 pad;
	__u64 size;
};

/*
 * Where the new buffer's chunks are. With GOS_ALLOC_IN_ORDER in layout (every
 * engine since the flag was defined sets it): its first device_bytes on the
 * device, the next waiting_bytes waiting for space (kept on the host until a
 * SETTLED notice says where they went), its last host_bytes on the host, so
 * nothing more need be asked. Without it (an older engine) only a buffer
 * wholly in one place is known; the rest is asked with GOS_REQ_PLACEMENT.
 * gos_ioc_alloc carries the same, its layout (in: 0) the same flag out.
 */
#define GOS_ALLOC_IN_ORDER 0x1u

struct gos_rep_alloc {
	__u64 buffer;
	__u64 device_bytes;
	__u64 host_bytes;
	__u64 waiting_bytes;
	__s32 numa_node;		/* host node for evicted data, -1 unknown */
	__u32 layout;			/* GOS_ALLOC_IN_ORDER, or 0 from an older engine */
};

struct gos_req_buffer {
	__u64 buffer;
};

struct gos_req_priority {
	__u64 buffer;
	__u64 offset;
	__u64 length;
	__u32 priority;
	__u32 pad;
};

struct gos_req_order_done {
	__u64 order;
	__u32 ok;			/* 1 = carried out, 0 = failed */
	__u32 pad;
	__u64 duration_ns;
};

struct gos_req_activity {
	__u32 gpu;
	__u32 launches;			/* kernel launches since the last report */
};

/*
 * Where a buffer's chunks [first, first + count) are: one byte each,
 * GOS_PLACE_*. WAITING chunks are kept on the host until SETTLED says.
 */
#define GOS_PLACEMENT_MAX 65536
enum gos_place {
	GOS_PLACE_DEVICE = 0,
	GOS_PLACE_HOST = 1,
	GOS_PLACE_EVICTING = 2,		/* an order is out; still on the GPU */
	GOS_PLACE_RETURNING = 3,	/* an order is out; still on the host */
	GOS_PLACE_WAITING = 4,
};

struct gos_req_placement {
	__u64 buffer;
	__u32 first;
	__u32 count;			/* 1 .. GOS_PLACEMENT_MAX */
};

/* The job's view of one of its GPUs, for cuMemGetInfo. */
struct gos_req_meminfo {
	__u32 gpu;
	__u32 pad;
};

struct gos_rep_meminfo {
	__u64 allowed;			/* the job's limit, or the GPU's capacity */
	__u64 used;			/* allocated by the job, device and host */
	__u64 entitlement;		/* fair device share now */
	__u64 device_bytes;
	__u64 host_bytes;
	__s32 numa_node;		/* the GPU's host node for evicted data, -1 unknown */
	__u32 pad;
};

struct gos_req_job {
	__u64 job_id;
};

#define GOS_MAX_STEP_GPUS 16

struct gos_req_step {
	__u64 job_id;
	__u32 step_id;
	__u32 uid;
	__u32 ngpus;
	__u32 gpus[GOS_MAX_STEP_GPUS];	/* node GPU indices */
	__u32 factor_milli;		/* --gpu-mem-oversub=FACTOR x 1000, or 0 */
	__u64 size_limit;		/* --gpu-mem-oversub=SIZE in bytes, or 0 */
	/* root's word until slurmctld's is read, which replaces it; the
	 * plugin sends none, for the job's environment is its user's */
	char partition[GOS_NAME_LEN];
	char account[GOS_NAME_LEN];
	char qos[GOS_NAME_LEN];
	/* version 3: shards held on gpus[i], of the GPU's shards_total[i]
	 * (held == total for whole GPUs; total 0: none configured, or unknown
	 * when shards_reason says why) */
	__u32 shards_held[GOS_MAX_STEP_GPUS];
	__u32 shards_total[GOS_MAX_STEP_GPUS];
	char shards_reason[128];
};

struct gos_req_step_ref {
	__u64 job_id;
	__u32 step_id;
	__u32 pad;
};

struct gos_req_task {
	__u64 job_id;
	__u32 step_id;
	__u32 pid;
};

/* The process's place in its MPI job, from MPI_Init. */
struct gos_req_rank {
	__s32 rank;
	__s32 local_rank;		/* among the job's ranks on this node */
	__u32 world_size;
	__u32 pad;
	char node[GOS_NAME_LEN];	/* MPI_Get_processor_name */
};

/* One rank's figures, gathered to rank 0 at MPI_Finalize. */
struct gos_rank_record {
	__s32 rank;
	__s32 local_rank;
	__u32 pid;
	__u32 managed;			/* 1 if the engine managed the rank */
	char node[GOS_NAME_LEN];
	__u64 device_bytes;		/* at MPI_Finalize */
	__u64 host_bytes;
	__u64 evictions;
	__u64 returns;
	__u64 bytes_evicted;
	__u64 bytes_returned;
	__u64 advice;			/* advice episodes the rank saw */
	__u64 pinned_bytes;		/* pinned to host on advice */
	__u64 exchanges;		/* gpuoversub_mpi_exchange calls */
};

#define GOS_RANK_REPORT_MAX 4096	/* records per frame; larger jobs send several */

struct gos_req_rank_report {
	__u32 count;			/* 1 .. GOS_RANK_REPORT_MAX records follow */
	__u32 pad;
};

/*
 * JOBWIDE_PART (root: the SPANK job_epilog): a run ended on this node
 * (docs/jobwide.md). The head holds the epilog's facts; after it come
 * nodelist_len bytes of SLURM_NODELIST, then frame_len bytes of the frame
 * the epilog encoded and sealed (none when the node holds no part), which
 * the daemon sends on to the run's writer unchanged.
 */
#define GOS_JOBWIDE_NODE_LEN 64		/* SLURMD_NODENAME, NUL-padded; all 64 bytes may be the name */
#define GOS_JOBWIDE_PART_MAX 65536	/* bytes after the head: node list and frame */

struct gos_req_jobwide {
	__u64 job_id;
	__s64 start;			/* SLURM_JOB_START_TIME: the run's key */
	__u32 run;			/* SLURM_JOB_RESTART_COUNT */
	__u32 num_nodes;		/* SLURM_JOB_NUM_NODES */
	char node[GOS_JOBWIDE_NODE_LEN];
	__u32 nodelist_len;
	__u32 frame_len;
};

/*
 * The run as the daemon took it: the epilog's start, or, where the epilog
 * has none (0: Slurm 22.05 sets no SLURM_JOB_START_TIME), the start and
 * restart count slurmctld showed while the job ran here. An epilog without
 * a start sends its run end without a frame first, and seals its part
 * with the run this names.
 */
struct gos_rep_jobwide {
	__s64 start;
	__u32 run;
	__u32 pad;
};

/*
 * Order kinds match the engine's message kinds (kmod/engine/wire.c converts
 * one into the other). EVICT and RETURN are orders: they name a byte range
 * of a buffer to move, and the agent acknowledges each by its id. SETTLED
 * and ADVICE are notices (id 0), acknowledged by nobody. SETTLED says where
 * a new buffer's waiting bytes went: they are [offset, offset + length), its
 * first device_bytes now on the device, its last host_bytes on the host
 * (device_bytes + host_bytes == length; an older engine sent offset 0, the
 * buffer's size as length and the split alone, which the agent tells apart by
 * that sum and answers by asking GOS_REQ_PLACEMENT). ADVICE carries the
 * tenant's device_bytes, host_bytes, entitlement and oversub_ns.
 */
enum gos_order_kind {
	GOS_ORDER_EVICT = 1,
	GOS_ORDER_RETURN = 2,
	GOS_ORDER_SETTLED = 3,
	GOS_ORDER_ADVICE = 4,
};

struct gos_wire_order {
	__u64 id;			/* to ack or fail; 0 for notices */
	__u32 kind;
	__u32 gpu;			/* index among the job's GPUs */
	__u64 buffer;
	__u64 offset;			/* EVICT, RETURN, SETTLED: the range in the buffer */
	__u64 length;
	__u64 device_bytes;		/* SETTLED: the range's split; ADVICE: the tenant's */
	__u64 host_bytes;
	__u64 entitlement;
	__u64 oversub_ns;		/* ADVICE: how long the job has had bytes in host RAM there */
	__s32 numa_node;		/* EVICT: host node to place data on */
	__u32 pad;
};

/*
 * The kernel module's devices: the same engine behind ioctls.
 * /dev/gpuoversub (0666) is the agents': read() returns whole
 * gos_wire_order records (gpu is the index among the reader's job's GPUs,
 * as on the socket; numa_node -1); poll() says when one is waiting.
 * Closing the file, kill -9 included, releases the process's buffers.
 * /dev/gpuoversub-control is the daemon's: GPUs, tenants, bindings and
 * statistics, for whoever may open it for writing (0600 root, as the
 * module makes it), not for a capability. Both answer GOS_IOC_VERSION.
 */
#define GOS_KABI_VERSION 7
#define GOS_IOC_MAGIC 0xB7

struct gos_ioc_version {
	__u32 abi;			/* GOS_KABI_VERSION */
	__u32 chunk_size;
	__u64 instance;			/* random per module load: tenant ids of another load mean nothing */
};

/* The daemon's, on /dev/gpuoversub-control (-EPERM on /dev/gpuoversub). */
struct gos_ioc_gpu {
	__u32 gpu;			/* node GPU index */
	__u32 pad;
	__u64 physical;
	__u64 reserve;
};

struct gos_ioc_tenant {
	__u32 gpu;
	__u32 weight;			/* >= 1 */
	__u64 limit;			/* 0 = none */
	__u32 tenant;			/* out */
	__u32 pad;
};

/*
 * Binds a process and its descendants (pid), or every process in a cgroup
 * v2 and its descendants (cgroup: the id, which is the inode number of the
 * cgroup's directory), to a job: its tenants, one per GPU of the job, in the
 * job's GPU order. One of pid and cgroup, the other 0.
 */
struct gos_ioc_bind {
	__u32 pid;
	__u32 ntenants;			/* 1 .. GOS_MAX_STEP_GPUS; ignored by UNBIND */
	__u64 cgroup;
	__u32 tenants[GOS_MAX_STEP_GPUS];
};

struct gos_ioc_tenant_policy {
	__u32 tenant;
	__u32 weight;			/* >= 1 */
	__u64 limit;			/* 0 = none */
	__u64 min_bytes;		/* guaranteed share, 0 = none */
};

/*
 * Caps the buffers a tenant may hold at once (version 4): one allocation
 * more fails with ENOBUFS. flags and pad must be 0.
 */
/* GPU memory the tenant's processes hold without the agent (NVML). */
struct gos_ioc_tenant_unmanaged {
	__u32 tenant;
	__u32 pad;
	__u64 bytes;
};

struct gos_ioc_tenant_buffers {
	__u32 tenant;
	__u32 max_buffers;		/* 0 = no cap */
	__u32 flags;			/* none defined yet */
	__u32 pad;
};

struct gos_ioc_tenant_ref {
	__u32 tenant;
	__u32 pad;
};

/*
 * A tenant's statistics, for reports: the engine's own record (it fills this
 * struct), so the module and the daemon copy it whole. The fields, their
 * kinds and meanings are listed in tenant_stats.def.
 */
struct gos_tenant_stats {
#define GOS_TENANT_STAT(type, name, kind, help) __##type name;
#include "tenant_stats.def"
};

struct gos_ioc_tenant_stats {
	__u32 tenant;			/* in */
	__u32 pad;			/* in: 0 */
	struct gos_tenant_stats stats;	/* out */
};

/* The engine's own record of a GPU, as the module and the daemon read it. */
struct gos_gpu_stats {
	__u64 physical;
	__u64 reserve;
	__u64 external;			/* used by processes outside the engine */
	__u64 capacity;			/* physical - reserve - external */
	__u64 used;			/* resident + in-flight bytes */
	__u64 evicting;
	__u64 waiting;
	__u32 tenants;
	__u32 outstanding_orders;
};

struct gos_ioc_gpu_stats {
	__u32 gpu;			/* in */
	__u32 pad;			/* in: 0 */
	struct gos_gpu_stats stats;	/* out */
};

/* Memory used on the GPU outside the engine (NVML's view). */
struct gos_ioc_gpu_external {
	__u32 gpu;
	__u32 pad;
	__u64 bytes;
};

/*
 * Every tenant's id, so a restarted daemon finds tenants no job record names
 * (created just before a crash, or left to retire by a job that ended).
 */
#define GOS_TENANT_LIST_MAX 65536
struct gos_ioc_tenant_list {
	__u32 count;			/* in: room in ids (0 .. MAX); out: how many tenants exist */
	__u32 pad;
	__u64 ids;			/* user pointer to count __u32, filled up to the room */
};

/* Where chunks [first, first + count) of a buffer are: count bytes of GOS_PLACE_*. */
struct gos_ioc_placement {
	__u64 buffer;
	__u32 first;
	__u32 count;			/* 1 .. GOS_PLACEMENT_MAX */
	__u64 states;			/* user pointer */
};

/* Agents: the tenant is the job's on that GPU, as the binding says. */
struct gos_ioc_alloc {
	__u32 gpu;			/* index among the job's GPUs */
	__u32 priority;
	__u32 flags;			/* GOS_ALLOC_FLAG_* */
	__u32 layout;			/* in: 0; out: GOS_ALLOC_IN_ORDER (gos_rep_alloc) */
	__u64 size;
	__u64 buffer;			/* out, and the placement, as gos_rep_alloc's: */
	__u64 device_bytes;
	__u64 host_bytes;
	__u64 waiting_bytes;
};

struct gos_ioc_order {
	__u64 order;
	__u32 ok;			/* 1 = carried out, 0 = failed */
	__u32 pad;
};

#define GOS_IOC_VERSION _IOR(GOS_IOC_MAGIC, 0, struct gos_ioc_version)
#define GOS_IOC_GPU_ADD _IOW(GOS_IOC_MAGIC, 1, struct gos_ioc_gpu)
#define GOS_IOC_TENANT_CREATE _IOWR(GOS_IOC_MAGIC, 2, struct gos_ioc_tenant)
#define GOS_IOC_BIND _IOW(GOS_IOC_MAGIC, 3, struct gos_ioc_bind)
#define GOS_IOC_UNBIND _IOW(GOS_IOC_MAGIC, 4, struct gos_ioc_bind)
#define GOS_IOC_TENANT_POLICY _IOW(GOS_IOC_MAGIC, 5, struct gos_ioc_tenant_policy)
#define GOS_IOC_TENANT_DESTROY _IOW(GOS_IOC_MAGIC, 6, struct gos_ioc_tenant_ref)
#define GOS_IOC_TENANT_STATS _IOWR(GOS_IOC_MAGIC, 7, struct gos_ioc_tenant_stats)
#define GOS_IOC_GPU_STATS _IOWR(GOS_IOC_MAGIC, 8, struct gos_ioc_gpu_stats)
#define GOS_IOC_GPU_EXTERNAL _IOW(GOS_IOC_MAGIC, 9, struct gos_ioc_gpu_external)
#define GOS_IOC_TENANT_LIST _IOWR(GOS_IOC_MAGIC, 10, struct gos_ioc_tenant_list)
#define GOS_IOC_TENANT_BUFFERS _IOW(GOS_IOC_MAGIC, 11, struct gos_ioc_tenant_buffers)
#define GOS_IOC_TENANT_UNMANAGED _IOW(GOS_IOC_MAGIC, 12, struct gos_ioc_tenant_unmanaged)
#define GOS_IOC_ALLOC _IOWR(GOS_IOC_MAGIC, 16, struct gos_ioc_alloc)
#define GOS_IOC_FREE _IOW(GOS_IOC_MAGIC, 17, struct gos_req_buffer)
#define GOS_IOC_PRIORITY _IOW(GOS_IOC_MAGIC, 18, struct gos_req_priority)
#define GOS_IOC_ORDER_DONE _IOW(GOS_IOC_MAGIC, 19, struct gos_ioc_order)
#define GOS_IOC_PLACEMENT _IOW(GOS_IOC_MAGIC, 20, struct gos_ioc_placement)

#endif /* GPUOVERSUB_ABI_H */
