#!/usr/bin/env bash
# The multi-lane executor's speed-up without a GPU: job 1 holds ~1 GiB of a
# simulated 1 GiB GPU, job 2 allocates 480 MiB, and we time until job 2's
# memory is all on the device (the pressure relief a user feels), with
# GPUOVERSUB_EVICT_WORKERS 1, 2, 4 and 8 in one run, as ratios to 1 worker.
# The fake driver's cost model (tests/fakecuda/cost.hpp) gives one thread
# the eviction rate measured on an H100, 6.4 GB/s: a model, not a GPU.
# Needs root (it registers the jobs as the SPANK plugin would).
set -euo pipefail
BUILD=${BUILD:-build}
results=${1:-}
reps=${REPS:-5}
# shellcheck source=bench/private_daemon.bash
source "$(dirname "$0")/private_daemon.bash"
private_daemon 1G
"$BUILD/tests/tools/gos_register" "$work/sock" step 2 0
export LD_LIBRARY_PATH=$BUILD/tests/fakecuda FAKECUDA_MEMORY=1G FAKECUDA_STATE=$work/fake.state
# Job 1's moves cost 2 MiB in 330 us on one thread (6.4 GB/s), advice 20 us,
# serialized; job 2's own placement costs nothing, so that the figure is
# job 1's eviction and the engine's turn-around, not job 2's prefetch.
cost=advise=20+0,prefetch=30+150,discard=10+2
agent=$(realpath "$BUILD/lib/libgpuoversub.so")
app() {	# app JOB [VAR=VALUE...]: the test program as a task of JOB, in the agent
	local job=$1
	shift
	env "$@" LD_PRELOAD="$agent" GPUOVERSUB_SOCKET="$work/sock" GPUOVERSUB_REQUIRED=1 \
		"$BUILD/tests/tools/gos_register" "$work/sock" exec "$job" "$BUILD/tests/tools/gos_testapp"
}
ask() {	# ask FD_IN FD_OUT LINE: one command, its reply
	echo "$3" >&"$1"
	local reply
	read -r -t 60 -u "$2" reply
	echo "$reply"
}
start() {	# start NAME JOB [VAR=VALUE...]: the program on FIFOs, its fds in NAME_in and NAME_out
	local name=$1 job=$2 reply
	shift 2
	rm -f "$work/$name.in" "$work/$name.out"
	mkfifo "$work/$name.in" "$work/$name.out"
	app "$job" "$@" <"$work/$name.in" >"$work/$name.out" 2>>"${LOG:-/dev/null}" &
	exec {reply}>"$work/$name.in"
	printf -v "${name}_in" %s "$reply"
	exec {reply}<"$work/$name.out"
	printf -v "${name}_out" %s "$reply"
	read -r -t 30 -u "$reply" reply	# ready
}
# One relief time in microseconds with $1 workers in job 1.
relief_us() {
	local i reply
	start holder 1 GPUOVERSUB_EVICT_WORKERS="$1" GPUOVERSUB_VERBOSE="${VERBOSE:-0}" FAKECUDA_COST="$cost"
	for i in 1 2 3 4 5 6 7 8; do
		reply=$(ask "$holder_in" "$holder_out" "alloc h$i 120")
		[ "$reply" = ok ] || { echo "job 1 could not allocate h$i: $reply" >&2; exit 1; }
	done
	start presser 2
	reply=$(ask "$presser_in" "$presser_out" "press p 480 30000")
	ask "$presser_in" "$presser_out" quit >/dev/null
	ask "$holder_in" "$holder_out" quit >/dev/null
	exec {holder_in}>&- {holder_out}<&- {presser_in}>&- {presser_out}<&-
	wait
	case $reply in "ok "*) echo $(( ${reply#ok } / 1000 )) ;; *) echo "job 2 was not relieved: $reply" >&2; exit 1 ;; esac
}
median() { tr ' ' '\n' | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
declare -A med
for w in 1 2 4 8; do
	runs=()
	for _ in $(seq "$reps"); do runs+=("$(relief_us "$w")"); done
	med[$w]=$(echo "${runs[*]}" | median)
done
ratio() { awk -v a="${med[1]}" -v b="$1" 'BEGIN {printf "%.2f", a / b}'; }
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
text="Multi-lane eviction, fake driver with its cost model for job 1 ($cost: us per call + us per MiB),
$(nproc) x $cpu, $(date +%F), median of $reps: job 2 allocates 480 MiB on a 1 GiB GPU that job 1 fills
(960 MiB), timed until it is all on the device.

| workers | relief, ms | speed-up vs 1 worker |
|---|---|---|
| 1 | $(( med[1] / 1000 )).$(( med[1] % 1000 / 100 )) | 1.00 |
| 2 | $(( med[2] / 1000 )).$(( med[2] % 1000 / 100 )) | $(ratio "${med[2]}") |
| 4 | $(( med[4] / 1000 )).$(( med[4] % 1000 / 100 )) | $(ratio "${med[4]}") |
| 8 | $(( med[8] / 1000 )).$(( med[8] % 1000 / 100 )) | $(ratio "${med[8]}") |

A model, not a measurement: the speed-up shows that the lanes overlap where the model lets migrations
overlap (the UVM facts in issue 16); the GPU's figures are \`make bench-gpu\`'s."
echo "$text"
[ -z "$results" ] || python3 "$(dirname "$0")/results_section.py" "$results" bench_evict "$text"
