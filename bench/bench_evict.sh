#!/usr/bin/env bash
# The multi-lane executor's speed-up without a GPU: job 1 holds ~1 GiB of a
# simulated 1 GiB GPU, job 2 allocates 480 MiB, and we time until job 2's
# memory is all on the device (the pressure relief a user feels), with
# GPUOVERSUB_EVICT_WORKERS 1, 2, 4 and 8 in one run: p50 and p99 over REPS
# runs (5), the speed-up as the ratio of p50s to 1 worker (bench/relief.bash
# holds the measurement, which the GPU suite shares).
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
# shellcheck source=bench/relief.bash
source "$(dirname "$0")/relief.bash"
holder() { app 1 GPUOVERSUB_EVICT_WORKERS="$workers" GPUOVERSUB_VERBOSE="${VERBOSE:-0}" FAKECUDA_COST="$cost"; }
presser() { app 2; }
declare -A p50 p99
for workers in 1 2 4 8; do
	runs=()
	for _ in $(seq "$reps"); do runs+=("$(relief_us 960 120 480 30000)"); done
	p50[$workers]=$(echo "${runs[*]}" | quantile 0.5)
	p99[$workers]=$(echo "${runs[*]}" | quantile 0.99)
done
ratio() { awk -v a="${p50[1]}" -v b="$1" 'BEGIN {printf "%.2f", a / b}'; }
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
text="Multi-lane eviction, fake driver with its cost model for job 1 ($cost: us per call + us per MiB),
$(nproc) x $cpu, $(date +%F), $reps runs each (p99: nearest rank, so the slowest of few runs): job 2
allocates 480 MiB on a 1 GiB GPU that job 1 fills (960 MiB), timed until it is all on the device.

| Job 1 holds | Job 2 allocates | Workers | Relief p50, ms | Relief p99, ms | p50 speed-up vs 1 worker |
|---|---|---|---|---|---|
$(for w in 1 2 4 8; do echo "| 960 MiB | 480 MiB | $w | $(ms "${p50[$w]}") | $(ms "${p99[$w]}") | $(ratio "${p50[$w]}") |"; done)

A model, not a measurement: the speed-up shows that the lanes overlap where the model lets migrations
overlap (the UVM facts in issue 16); the GPU's figures are \`make bench-gpu\`'s."
echo "$text"
[ -z "$results" ] || python3 "$(dirname "$0")/results_section.py" "$results" bench_evict "$text"
