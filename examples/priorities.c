/*
 * Buffer priorities with gpuoversub, in a program that also runs without it.
 *
 * The gpuoversub functions are looked up with dlsym: under a job submitted
 * with --gpu-mem-oversub the agent is preloaded and they exist; elsewhere
 * the lookups return NULL and the program simply skips them.
 *
 *   cc -I/usr/local/cuda/include priorities.c -lcuda -ldl -o priorities
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>

#include <gpuoversub/gpuoversub.h>

typedef int (*set_priority_fn)(const void *, size_t, int);
typedef int (*on_advice_fn)(gpuoversub_advice_fn, void *);

static void advice(const struct gpuoversub_advice *a, void *ctx)
{
	(void)ctx;
	fprintf(stderr, "advice: %llu MiB on GPU %d, %llu MiB in host RAM, share %llu MiB: %s\n",
		(unsigned long long)(a->device_bytes >> 20), a->gpu, (unsigned long long)(a->host_bytes >> 20),
		(unsigned long long)(a->entitlement >> 20), a->suggestion);
}

#define CHECK(call)                                                          \
	do {                                                                 \
		CUresult r_ = (call);                                        \
		if (r_ != CUDA_SUCCESS) {                                    \
			fprintf(stderr, "%s failed: %d\n", #call, (int)r_);  \
			return 1;                                            \
		}                                                            \
	} while (0)

int main(void)
{
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr weights, activations, scratch;
	const size_t mib = 1 << 20;

	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CHECK(cuCtxSetCurrent(ctx));
	CHECK(cuMemAlloc(&weights, 64 * mib));
	CHECK(cuMemAlloc(&activations, 32 * mib));
	CHECK(cuMemAlloc(&scratch, 16 * mib));

	set_priority_fn set_priority = (set_priority_fn)dlsym(RTLD_DEFAULT, "gpuoversub_set_priority");
	on_advice_fn on_advice = (on_advice_fn)dlsym(RTLD_DEFAULT, "gpuoversub_on_advice");
	if (set_priority && on_advice) {
		/* Used every step: evicted last. Rarely used: evicted first. */
		int err = set_priority((void *)weights, 64 * mib, GPUOVERSUB_PRIORITY_MAX);
		err = err ? err : set_priority((void *)activations, 32 * mib, GPUOVERSUB_PRIORITY_DEFAULT);
		err = err ? err : set_priority((void *)scratch, 16 * mib, GPUOVERSUB_PRIORITY_MIN);
		on_advice(advice, NULL);
		printf(err ? "setting priorities failed: %d\n" : "priorities set\n", err);
	} else {
		printf("running without gpuoversub: no priorities\n");
	}
	/* ... the application's work ... */
	CHECK(cuMemFree(scratch));
	CHECK(cuMemFree(activations));
	CHECK(cuMemFree(weights));
	return 0;
}
