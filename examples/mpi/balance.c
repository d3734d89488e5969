/*
 * An MPI time-stepping program that uses gpuoversub's MPI side:
 *   - buffers of three priorities per rank (state, halo, history), so the
 *     history leaves the GPU first when memory runs short;
 *   - an advice callback, which only records the advice (it runs on the
 *     agent's thread and must not block, let alone call MPI);
 *   - gpuoversub_mpi_exchange every few steps, at a point where all ranks
 *     are between steps, to move work from ranks under pressure to ranks
 *     with headroom.
 * It also runs without gpuoversub: the priority and advice calls are looked
 * up with dlsym, and the exchange then reports every rank as unmanaged.
 *
 *   mpicc -I/usr/local/cuda/include balance.c -lgpuoversub_mpi -lcuda -ldl -o balance
 *   sbatch balance.sbatch
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include <gpuoversub/gpuoversub.h>
#include <gpuoversub/gpuoversub_mpi.h>

#define MiB (1ull << 20)

static volatile int advised;

static void on_advice(const struct gpuoversub_advice *a, void *ctx)
{
	(void)a;
	(void)ctx;
	advised = 1;	/* acted on between steps, on the application's thread */
}

static void prioritize(CUdeviceptr p, size_t bytes, int priority)
{
	int (*set)(const void *, size_t, int) =
		(int (*)(const void *, size_t, int))dlsym(RTLD_DEFAULT, "gpuoversub_set_priority");
	if (set)
		set((const void *)p, bytes, priority);
}

int main(int argc, char **argv)
{
	int rank, size, local;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm node;
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
	MPI_Comm_rank(node, &local);
	size_t mib = argc > 1 ? strtoull(argv[1], NULL, 10) : 64;
	int steps = argc > 2 ? atoi(argv[2]) : 20;

	int ndev = 0;
	CUdevice dev;
	CUcontext ctx;
	if (cuInit(0) || cuDeviceGetCount(&ndev) || !ndev || cuDeviceGet(&dev, local % ndev) ||
	    cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) {
		fprintf(stderr, "rank %d: no usable GPU\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	CUdeviceptr state, halo, history;
	if (cuMemAlloc(&state, mib * MiB) || cuMemAlloc(&halo, mib * MiB / 4) || cuMemAlloc(&history, 2 * mib * MiB)) {
		fprintf(stderr, "rank %d: out of GPU memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	prioritize(state, mib * MiB, GPUOVERSUB_PRIORITY_MAX);	/* every step reads it */
	prioritize(halo, mib * MiB / 4, GPUOVERSUB_PRIORITY_DEFAULT);
	prioritize(history, 2 * mib * MiB, GPUOVERSUB_PRIORITY_MIN);	/* written, rarely read */
	int (*on)(gpuoversub_advice_fn, void *) = (int (*)(gpuoversub_advice_fn, void *))dlsym(RTLD_DEFAULT,
											  "gpuoversub_on_advice");
	if (on)
		on(on_advice, NULL);

	struct gpuoversub_pressure *all = calloc((size_t)size, sizeof *all);
	for (int step = 1; step <= steps; step++) {
		cuMemsetD8(state, (unsigned char)step, mib * MiB);	/* the step's work */
		if (step % 5)
			continue;
		/* A safe point: every rank is between steps. */
		if (gpuoversub_mpi_exchange(MPI_COMM_WORLD, all) != MPI_SUCCESS)
			MPI_Abort(MPI_COMM_WORLD, 1);
		int busiest = 0, roomiest = 0;
		for (int i = 1; i < size; i++) {
			if (all[i].pressure > all[busiest].pressure)
				busiest = i;
			if (all[i].headroom > all[roomiest].headroom)
				roomiest = i;
		}
		if (rank == 0 && all[busiest].pressure > 1.0 && all[roomiest].headroom > 0)
			printf("step %d: rank %d is at %.2fx its fair share; rank %d has %llu MiB of headroom: "
			       "move work from %d to %d\n",
			       step, busiest, all[busiest].pressure, roomiest,
			       (unsigned long long)(all[roomiest].headroom / MiB), busiest, roomiest);
		if (advised) {
			printf("step %d: rank %d was advised that its job stays above its fair share\n", step, rank);
			advised = 0;
		}
	}
	if (rank == 0)
		printf("done: %d ranks, %d steps\n", size, steps);
	free(all);
	cuMemFree(history);
	cuMemFree(halo);
	cuMemFree(state);
	MPI_Comm_free(&node);
	MPI_Finalize();
	return 0;
}
