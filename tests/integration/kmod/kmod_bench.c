// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The allocation ioctl's cost in kernel mode (issue 16, the control path),
 * for `make bench` (bench/bench_kmod.sh boots it with run.sh --bench): on a
 * fresh gpuoversub.ko, a GPU with room, one tenant and this process bound
 * to it, each round times one GOS_IOC_VERSION (the no-op baseline), one
 * 2 MiB GOS_IOC_ALLOC and its GOS_IOC_FREE, so that both see the same
 * guest and the engine's state does not grow. Prints
 * "GOS: bench NAME median_ns p99_ns" per ioctl and the paired ratio.
 * Usage: kmod_bench [ROUNDS]. Static; exit 0 on success.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <gpuoversub/abi.h>

enum { VERSION, ALLOC, FREE, NCALLS };
static const char *const names[NCALLS] = { "version", "alloc", "free" };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The q-quantile of n samples, sorted in place. */
static double quantile(double *v, size_t n, double q)
{
	qsort(v, n, sizeof(*v), by_value);
	return v[(size_t)(q * (double)(n - 1))];
}

static int fail(const char *what)
{
	printf("GOS: FAIL bench %s: %s\n", what, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 20000;
	struct gos_ioc_gpu g = { .gpu = 0, .physical = 1ull << 30 };
	struct gos_ioc_tenant t = { .gpu = 0, .weight = 1 };
	struct gos_ioc_version v;
	double *ns[NCALLS], *ratio;
	int control = open("/dev/gpuoversub-control", O_RDWR), fd = open("/dev/gpuoversub", O_RDWR);

	if (rounds < 100 || rounds > 10000000) {
		printf("GOS: FAIL bench: ROUNDS must be 100 .. 10000000, not %s\n", argv[1]);
		return 1;
	}
	if (fd < 0 || control < 0)
		return fail("open /dev/gpuoversub and /dev/gpuoversub-control");
	if (ioctl(control, GOS_IOC_GPU_ADD, &g) || ioctl(control, GOS_IOC_TENANT_CREATE, &t))
		return fail("GPU and tenant");
	struct gos_ioc_bind b = { .pid = (__u32)getpid(), .ntenants = 1, .tenants = { t.tenant } };

	if (ioctl(control, GOS_IOC_BIND, &b))
		return fail("bind");
	for (int c = 0; c < NCALLS; c++)
		ns[c] = calloc((size_t)rounds, sizeof(double));
	ratio = calloc((size_t)rounds, sizeof(double));
	if (!ns[VERSION] || !ns[ALLOC] || !ns[FREE] || !ratio)
		return fail("memory");
	/* Rounds below zero warm the caches and the engine's slabs, untimed. */
	for (long i = -rounds / 10; i < rounds; i++) {
		struct gos_ioc_alloc a = { .priority = 8, .size = 2 << 20 };
		uint64_t t0 = now_ns(), t1, t2, t3;

		if (ioctl(fd, GOS_IOC_VERSION, &v))
			return fail("GOS_IOC_VERSION");
		t1 = now_ns();
		if (ioctl(fd, GOS_IOC_ALLOC, &a))
			return fail("GOS_IOC_ALLOC");
		t2 = now_ns();
		struct gos_req_buffer f = { .buffer = a.buffer };

		if (ioctl(fd, GOS_IOC_FREE, &f))
			return fail("GOS_IOC_FREE");
		t3 = now_ns();
		if (a.device_bytes != a.size) {
			printf("GOS: FAIL bench: the allocation was not placed on the device\n");
			return 1;
		}
		if (i < 0)
			continue;
		ns[VERSION][i] = (double)(t1 - t0);
		ns[ALLOC][i] = (double)(t2 - t1);
		ns[FREE][i] = (double)(t3 - t2);
		ratio[i] = ns[ALLOC][i] / (ns[VERSION][i] > 0 ? ns[VERSION][i] : 1);
	}
	printf("GOS: bench rounds %ld\n", rounds);
	for (int c = 0; c < NCALLS; c++)
		printf("GOS: bench %s %.0f %.0f\n", names[c], quantile(ns[c], (size_t)rounds, 0.5),
		       quantile(ns[c], (size_t)rounds, 0.99));
	printf("GOS: bench ratio %.2f\n", quantile(ratio, (size_t)rounds, 0.5));
	return 0;
}
