# How the Slurm tests launch MPI on every release (Open MPI 4.1, 5 and 6;
# Slurm 22.05, 24.11 and 26.05), sourced by slurm.bats and multinode.bats.
#   pmix_or_skip   skips the test, naming what this Slurm lacks, when srun
#                  has no mpi/pmix plugin (Debian's Slurm 26.05 dropped it)

# srun --mpi=list prints "MPI plugin types are..." then one type a line.
mpi_types() {
	srun --mpi=list 2>&1 | sed -n 's/^[[:space:]]\+\([a-z0-9_]\+\)$/\1/p' | paste -sd, - | sed 's/,/, /g'
}

pmix_or_skip() {
	local types
	types=$(mpi_types)
	[[ ", $types," == *", pmix,"* ]] ||
		skip "this Slurm ($(srun --version)) ships no mpi/pmix plugin, so srun --mpi=pmix cannot start ranks (srun --mpi=list: ${types:-nothing}); ${1:-mpirun inside sbatch covers the same ground}"
}
