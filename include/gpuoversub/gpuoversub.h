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
	uint64_t device_bytes;		/* the job's bytes on its GPUs now */
	uint64_t host_bytes;		/* the job's bytes moved to host RAM */
	uint64_t allowed;		/* the job's limit, summed over its GPUs */
	uint64_t entitlement;		/* the job's fair device share now */
	uint64_t buffers;		/* allocations this process holds */
	uint64_t evictions;		/* orders this process carried out */
	uint64_t returns;
	uint64_t bytes_evicted;
	uint64_t bytes_returned;
};

/* Fills *out; out->size must be set. Job figures are 0 when unmanaged. */
int gpuoversub_stats(struct gpuoversub_usage *out);

/* Sent when the engine throttles the job: it stays over its share. */
struct gpuoversub_advice {
	uint32_t size;			/* sizeof(struct gpuoversub_advice) */
	int32_t gpu;			/* the job's GPU index */
	uint64_t device_bytes;
	uint64_t host_bytes;
	uint64_t entitlement;
	const char *suggestion;		/* for people, valid during the call */
};

typedef void (*gpuoversub_advice_fn)(const struct gpuoversub_advice *advice, void *ctx);

/*
 * Registers the callback for advice; NULL removes it. It runs on the
 * agent's thread and must not block. Without one, the agent prints one
 * line per episode on stderr.
 */
int gpuoversub_on_advice(gpuoversub_advice_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif

#endif /* GPUOVERSUB_H */
