/* SPDX-License-Identifier: MIT */
/*
 * gpuoversub for MPI programs: libgpuoversub_mpi.so, linked or preloaded.
 *
 * The library wraps MPI_Init, MPI_Init_thread and MPI_Finalize through
 * PMPI: at init it tells the agent each process's rank, local rank and
 * node; at finalize it gathers every rank's figures to rank 0 for the job's
 * report. It starts no collective of its own outside those calls, which
 * every rank makes. gpuoversub_mpi_exchange is the one collective it adds,
 * and only the application calls it. See gpuoversub(3).
 */
#ifndef GPUOVERSUB_MPI_H
#define GPUOVERSUB_MPI_H

#include <stdint.h>

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One rank's memory pressure, as gpuoversub_mpi_exchange returns it. */
struct gpuoversub_pressure {
	int32_t rank;			/* in the communicator passed */
	int32_t managed;		/* 1 if the engine manages the rank */
	uint64_t device_bytes;		/* the job's, on the rank's GPU(s) */
	uint64_t host_bytes;		/* moved to host RAM */
	uint64_t entitlement;		/* fair device share now */
	uint64_t headroom;		/* what the job may still allocate there */
	double pressure;		/* (device + host) / entitlement: 1 when it
					   fits, above 1 oversubscribed; 0 unmanaged */
};

/*
 * Collective over comm: fills out[0 .. size of comm - 1] with every rank's
 * pressure and headroom, the same on every rank, read once all ranks have
 * made the call (so what any rank allocated before it counts). Call it at
 * a safe point, between time steps say, to move work from ranks under
 * pressure to ranks with headroom. Without the agent every rank reads as unmanaged. Returns
 * MPI_SUCCESS or the MPI error of the exchange.
 */
int gpuoversub_mpi_exchange(MPI_Comm comm, struct gpuoversub_pressure *out);

#ifdef __cplusplus
}
#endif

#endif /* GPUOVERSUB_MPI_H */
