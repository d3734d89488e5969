/* SPDX-License-Identifier: MIT */
/*
 * gpuoversub: the application's side of GPU memory oversubscription.
 *
 * These functions live in libgpuoversub.so, the agent Slurm preloads into
 * the tasks of jobs submitted with --gpu-mem-oversub. A program that wants
 * to run with and without the agent looks them up with dlsym(RTLD_DEFAULT,
 * ...) and skips them when absent; see examples/priorities.c and
 * gpuoversub(3).
 *
 * Every function returns 0 or a negative errno value.
 */
#ifndef GPUOVERSUB_H
#define GPUOVERSUB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GPUOVERSUB_PRIORITY_MIN 0	/* evicted first */
#define GPUOVERSUB_PRIORITY_DEFAULT 8
#define GPUOVERSUB_PRIORITY_MAX 15	/* evicted last */

/*
 * Sets the priority of [ptr, ptr + len), which must lie inside one
 * allocation made through the CUDA driver or runtime. -ENOENT: not a
 * buffer the agent backs; -EINVAL: bad range or priority.
 */
int gpuoversub_set_priority(const void *ptr, size_t len, int priority);

/*
 * Names the allocation holding ptr; the priority comes from the file named
 * by GPUOVERSUB_PRIORITY_FILE ("name priority" lines), so users tune what
 * developers tagged. -ENOENT: no such buffer or no such tag in the file.
 */
int gpuoversub_tag(const void *ptr, const char *name);

struct gpuoversub_usage {
	uint32_t size;			/* set to sizeof(struct gpuoversub_usage) */
	uint32_t managed;		/* 1 if the engine manages this process */
	uint64_t device_bytes;		/* the job's bytes now on the GPUs this
					   process uses (all the job's, before
					   it allocates) */
	uint64_t host_bytes;		/* the job's bytes moved to host RAM */
	uint64_t allowed;		/* the job's limit, summed over its GPUs */
	uint64_t entitlement;		/* the job's fair device share now */
	uint64_t buffers;		/* allocations this process holds */
	uint64_t evictions;		/* orders this process carried out */
	uint64_t returns;
	uint64_t bytes_evicted;
	uint64_t bytes_returned;
	/* Since the MPI hooks (a caller built against an older header gets the
	 * fields above only): */
	uint64_t headroom;		/* what the job may still allocate there */
	uint64_t advice;		/* advice episodes this process saw */
	uint64_t pinned_bytes;		/* its buffers pinned to host on advice */
	/* Since one allocation costs one request: */
	uint64_t daemon_requests;	/* request frames the calling thread sent
					   to gpuoversubd (not the module's ioctls) */
	uint64_t daemon_waits;		/* how many of them it waited for: round
					   trips (frees are not waited for) */
};

/*
 * Fills *out up to out->size bytes; out->size must be set, and says on
 * return how much was filled. Job figures are 0 when unmanaged.
 */
int gpuoversub_stats(struct gpuoversub_usage *out);

/*
 * Tells the agent where this process is in its MPI job; the daemon's report
 * breaks its figures down by rank. libgpuoversub_mpi.so calls it in
 * MPI_Init; other launchers may too. -EINVAL: rank or local rank outside
 * the world size, or no node name.
 */
int gpuoversub_set_rank(int rank, int local_rank, int world_size, const char *node);

enum gpuoversub_action {
	GPUOVERSUB_ACTION_LOWER_PRIORITY = 1,	/* no GPU of the job has headroom */
	GPUOVERSUB_ACTION_MOVE_WORK = 2,	/* another GPU of the job has headroom */
};

#define GPUOVERSUB_MAX_GPUS 16

struct gpuoversub_headroom {
	int32_t gpu;			/* the job's GPU index */
	uint32_t pad;
	uint64_t bytes;			/* what the job may still allocate there */
};

/* Sent when the engine throttles the job: it stays over its share. */
struct gpuoversub_advice {
	uint32_t size;			/* sizeof(struct gpuoversub_advice) */
	int32_t gpu;			/* the job's GPU index */
	uint64_t device_bytes;
	uint64_t host_bytes;
	uint64_t entitlement;
	const char *suggestion;		/* for people, valid during the call */
	/* Since the MPI hooks: */
	int32_t rank;			/* MPI rank, or -1 */
	int32_t local_rank;
	uint64_t oversubscribed_ns;	/* the job's time with data in host RAM there */
	uint64_t pinned_bytes;		/* this process's buffers now pinned to host */
	uint32_t action;		/* enum gpuoversub_action */
	uint32_t ngpus;			/* entries in headroom: the job's other GPUs */
	struct gpuoversub_headroom headroom[GPUOVERSUB_MAX_GPUS];
};

typedef void (*gpuoversub_advice_fn)(const struct gpuoversub_advice *advice, void *ctx);

/*
 * Registers the callback for advice; NULL removes it. It runs on the
 * agent's thread and must not block. Without one, the agent prints one
 * line per episode on stderr. Before either, the agent pins this process's
 * lowest-priority buffers covering its part of the excess: they get
 * priority 0, so they are the first to leave the GPU and the last to come
 * back, and the buffers the process uses most stay on the device.
 */
int gpuoversub_on_advice(gpuoversub_advice_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif

#endif /* GPUOVERSUB_H */
