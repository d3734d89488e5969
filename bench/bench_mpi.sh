#!/usr/bin/env bash
# The MPI hooks' overhead, against the same program without them in the
# same run: mpirun -np 2 startup (MPI_Init + MPI_Finalize, median of 7) and
# 8-byte ping-pong latency. "With" is the full path: agent and hooks
# preloaded, ranks registered with a private gpuoversubd (simulated GPU),
# the rank report at finalize. Needs root (it registers the job).
set -euo pipefail
BUILD=${BUILD:-build}
results=${1:-}
B=$(realpath "$BUILD")
BUILD=$B
# shellcheck source=bench/private_daemon.bash
source "$(dirname "$0")/private_daemon.bash"
private_daemon 1G
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# run PRELOAD ARG: one mpirun -np 2 of the ping-pong program, as a task of job 1.
run() {
	"$B/tests/tools/gos_register" "$work/sock" exec 1 \
		mpirun -np 2 -x LD_PRELOAD="$1" -x GPUOVERSUB_SOCKET="$work/sock" -x SLURM_JOB_ID=1 \
		"$B/bench/mpi_pingpong" "$2"
}
startup() {	# median wall milliseconds of 7 runs
	for _ in $(seq 7); do
		s=$(date +%s%N); run "$1" 0 >/dev/null; echo $((($(date +%s%N) - s) / 1000000))
	done | sort -n | sed -n 4p
}
hooks="$B/lib/libgpuoversub.so:$B/lib/libgpuoversub_mpi.so"
plain_start=$(startup "")
hooks_start=$(startup "$hooks")
plain_lat=$(run "" 10000)
hooks_lat=$(run "$hooks" 10000)
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
text=$(python3 - "$plain_start" "$hooks_start" "$plain_lat" "$hooks_lat" "$(nproc) x $cpu" "$(date +%F)" <<'PY'
import sys
ps, hs, pl, hl, cpu, day = sys.argv[1:]
ps, hs, pl, hl = int(ps), int(hs), float(pl), float(hl)
print(f"MPI hooks, Open MPI mpirun -np 2 on {cpu}, {day}:\n\n"
      "| Measure | Without hooks | With agent + hooks | Ratio |\n|---|---|---|---|\n"
      f"| Startup (MPI_Init + MPI_Finalize, median of 7 runs) | {ps} ms | {hs} ms | {hs / ps:.2f}x |\n"
      f"| Ping-pong, 8 bytes, one way (median of 20 x 10000) | {pl:.3f} us | {hl:.3f} us | {hl / pl:.2f}x |")
PY
)
echo "$text"
[ -z "$results" ] || python3 "$(dirname "$0")/results_section.py" "$results" bench_mpi "$text"
