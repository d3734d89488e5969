/*
 * For bench/bench_mpi.sh: with argument 0, MPI_Init and MPI_Finalize only
 * (startup); with N, N ping-pongs of 8 bytes between ranks 0 and 1, and
 * rank 0 prints the median one-way latency of 20 rounds in microseconds.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, n = argc > 1 ? atoi(argv[1]) : 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	double rounds[20];
	char msg[8] = {0};
	for (int r = 0; n > 0 && r < 20; r++) {
		MPI_Barrier(MPI_COMM_WORLD);
		double t = MPI_Wtime();
		for (int i = 0; i < n; i++) {
			if (rank == 0) {
				MPI_Send(msg, 8, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
				MPI_Recv(msg, 8, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			} else if (rank == 1) {
				MPI_Recv(msg, 8, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				MPI_Send(msg, 8, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
			}
		}
		rounds[r] = (MPI_Wtime() - t) / (2.0 * n) * 1e6;
	}
	if (rank == 0 && n > 0) {
		qsort(rounds, 20, sizeof rounds[0], cmp);
		printf("%.3f\n", rounds[10]);
	}
	MPI_Finalize();
	return 0;
}
