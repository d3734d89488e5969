/*
 * An MPI program that knows nothing of gpuoversub: a ring pass and an
 * allreduce, checked. It must run the same with libgpuoversub_mpi.so
 * preloaded.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int provided, rank, size;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int token = rank, from = (rank + size - 1) % size, to = (rank + 1) % size;
	MPI_Sendrecv_replace(&token, 1, MPI_INT, to, 7, from, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	int sum = 0;
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	int ok = token == from && sum == size * (size - 1) / 2;
	printf("rank %d %s\n", rank, ok ? "ok" : "bad");
	MPI_Finalize();
	return ok ? 0 : 1;
}
