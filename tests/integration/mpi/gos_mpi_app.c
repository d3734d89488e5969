/*
 * An MPI program for tests/integration/mpi: each rank uses the GPU of its local rank
 * through the CUDA driver API (the fake driver in CI) and gpuoversub's API
 * through dlsym, as a real application would.
 *   gos_mpi_app basic          16 MiB per rank, one exchange, data checked
 *   gos_mpi_app pressure MIB   local rank 0 of each node holds a cold and a hot buffer of MIB
 *                              each plus MIB more on its GPU, waits for advice
 *   gos_mpi_app hold SEC       allocate, then barriers for SEC seconds
 * Every rank prints "rank R ..." lines on stdout; exit 0 on success.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gpuoversub/gpuoversub.h>
#include <gpuoversub/gpuoversub_mpi.h>

#define MiB (1ull << 20)

static int rank, size;

static void die(const char *what, int err)
{
	printf("rank %d error %s %d\n", rank, what, err);
	fflush(stdout);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

static CUdeviceptr alloc_filled(size_t bytes, unsigned seed)
{
	CUdeviceptr p;
	int err = cuMemAlloc(&p, bytes);
	if (err)
		die("cuMemAlloc", err);
	unsigned *h = malloc(bytes);
	for (size_t i = 0; i < bytes / 4; i++)
		h[i] = seed ^ (unsigned)(i * 2654435761u);
	if ((err = cuMemcpyHtoD(p, h, bytes)))
		die("cuMemcpyHtoD", err);
	free(h);
	return p;
}

static int intact(CUdeviceptr p, size_t bytes, unsigned seed)
{
	unsigned *h = malloc(bytes);
	int ok = cuMemcpyDtoH(h, p, bytes) == CUDA_SUCCESS;
	for (size_t i = 0; ok && i < bytes / 4; i++)
		ok = h[i] == (seed ^ (unsigned)(i * 2654435761u));
	free(h);
	return ok;
}

static void print_exchange(void)
{
	struct gpuoversub_pressure *all = calloc((size_t)size, sizeof *all);
	int err = gpuoversub_mpi_exchange(MPI_COMM_WORLD, all);
	if (err != MPI_SUCCESS)
		die("exchange", err);
	unsigned long long digest = 1469598103934665603ull;
	for (int i = 0; i < size; i++)
		for (size_t b = 0; b < sizeof all[i]; b++)
			digest = (digest ^ ((unsigned char *)&all[i])[b]) * 1099511628211ull;
	printf("rank %d exchange %016llx", rank, digest);
	for (int i = 0; i < size; i++)
		printf(" %d:%d:%.2f:%llu", all[i].rank, all[i].managed, all[i].pressure,
		       (unsigned long long)(all[i].headroom / MiB));
	printf("\n");
	free(all);
}

static volatile int advised;
static struct gpuoversub_advice last_advice;

static void on_advice(const struct gpuoversub_advice *a, void *ctx)
{
	(void)ctx;
	memcpy(&last_advice, a, a->size < sizeof last_advice ? a->size : sizeof last_advice);
	advised = 1;
}

static void residency(const char *name, CUdeviceptr p, size_t bytes)
{
	void (*where)(CUdeviceptr, size_t, unsigned long long *, unsigned long long *) =
		(void (*)(CUdeviceptr, size_t, unsigned long long *, unsigned long long *))dlsym(RTLD_DEFAULT,
												  "fakecuda_residency");
	unsigned long long dev = 0, host = 0;
	if (where)
		where(p, bytes, &dev, &host);
	printf("rank %d where %s %llu %llu\n", rank, name, dev / MiB, host / MiB);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	const char *mode = argc > 1 ? argv[1] : "basic";
	MPI_Comm node;
	int local = 0, ndev = 0;
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
	MPI_Comm_rank(node, &local);
	CUdevice dev;
	CUcontext ctx;
	int err = cuInit(0);
	if (!err)
		err = cuDeviceGetCount(&ndev);
	if (!err)
		err = cuDeviceGet(&dev, local % ndev);
	if (!err)
		err = cuDevicePrimaryCtxRetain(&ctx, dev);
	if (!err)
		err = cuCtxSetCurrent(ctx);
	if (err)
		die("CUDA setup", err);
	int ok = 1;
	if (!strcmp(mode, "basic")) {
		CUdeviceptr p = alloc_filled(16 * MiB, (unsigned)rank);
		print_exchange();
		ok = intact(p, 16 * MiB, (unsigned)rank);
		cuMemFree(p);
	} else if (!strcmp(mode, "pressure")) {
		size_t bytes = (argc > 2 ? strtoull(argv[2], NULL, 10) : 96) * MiB;
		CUdeviceptr cold = 0, hot = 0, more = 0;
		if (local == 0) {
			int (*on)(gpuoversub_advice_fn, void *) =
				(int (*)(gpuoversub_advice_fn, void *))dlsym(RTLD_DEFAULT, "gpuoversub_on_advice");
			int (*prio)(const void *, size_t, int) =
				(int (*)(const void *, size_t, int))dlsym(RTLD_DEFAULT, "gpuoversub_set_priority");
			if (on)
				on(on_advice, NULL);
			cold = alloc_filled(bytes, 1);
			hot = alloc_filled(bytes, 2);
			if (prio) {
				prio((void *)cold, bytes, 4);
				prio((void *)hot, bytes, 12);
			}
			more = alloc_filled(bytes, 3);
			for (int i = 0; i < 200 && !advised; i++)
				usleep(50000);
			if (advised)
				printf("rank %d advice rank %d local %d action %u pinned %llu ngpus %u headroom %llu "
				       "oversubscribed_ms %llu\n",
				       rank, last_advice.rank, last_advice.local_rank, last_advice.action,
				       (unsigned long long)(last_advice.pinned_bytes / MiB), last_advice.ngpus,
				       (unsigned long long)(last_advice.ngpus ? last_advice.headroom[0].bytes / MiB : 0),
				       (unsigned long long)(last_advice.oversubscribed_ns / 1000000));
			else
				printf("rank %d no advice\n", rank);
			/* More pressure after the pinning: the cold buffer goes first. */
			CUdeviceptr extra = alloc_filled(bytes / 2, 4);
			residency("cold", cold, bytes);
			residency("hot", hot, bytes);
			ok = advised && intact(cold, bytes, 1) && intact(hot, bytes, 2) && intact(more, bytes, 3) &&
			     intact(extra, bytes / 2, 4);
		} else {
			more = alloc_filled(8 * MiB, 5);
		}
		MPI_Barrier(MPI_COMM_WORLD);
		print_exchange();
	} else if (!strcmp(mode, "hold")) {
		double secs = argc > 2 ? atof(argv[2]) : 5;
		CUdeviceptr p = alloc_filled(8 * MiB, 9);
		printf("rank %d pid %d holding\n", rank, (int)getpid());
		fflush(stdout);
		double start = MPI_Wtime();
		while (MPI_Wtime() - start < secs) {
			MPI_Barrier(MPI_COMM_WORLD);
			usleep(100000);
		}
		ok = intact(p, 8 * MiB, 9);
	}
	printf("rank %d of %d local %d %s\n", rank, size, local, ok ? "ok" : "bad");
	fflush(stdout);
	MPI_Comm_free(&node);
	MPI_Finalize();
	return ok ? 0 : 1;
}
