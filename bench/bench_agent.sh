#!/usr/bin/env bash
# The agent's own cost per allocation, without a GPU: allocate+free pairs
# of 8 MiB through the test-only fake driver, with and without the agent
# (linked to a private gpuoversubd), in one run, and what the agent adds as
# a ratio to one Unix-socket echo between two processes measured in the
# same run (bench_roundtrip --echo): an allocation that fits costs one
# round trip to the daemon, so the target is <= 1.5x. On a GPU the
# driver's managed allocation adds to this; `make bench-gpu` measures that.
# Needs root (it registers the job as the SPANK plugin would).
set -euo pipefail
BUILD=${BUILD:-build}
results=${1:-}
# shellcheck source=bench/private_daemon.bash
source "$(dirname "$0")/private_daemon.bash"
private_daemon 64G
export LD_LIBRARY_PATH=$BUILD/tests/fakecuda FAKECUDA_MEMORY=64G
run() { printf 'bench 2000 8\nquit\n' | "$@" "$BUILD/tests/tools/gos_testapp" | awk '/^ok [0-9]/ {print $2}'; }
plain=$(run env)
echo_ns=$("$BUILD/bench/bench_roundtrip" --echo)
agent=$(run env LD_PRELOAD="$(realpath "$BUILD/lib/libgpuoversub.so")" GPUOVERSUB_SOCKET="$work/sock" \
	GPUOVERSUB_REQUIRED=1 "$BUILD/tests/tools/gos_register" "$work/sock" exec 1)
added=$((agent - plain))
ratio=$(awk -v a="$added" -v e="$echo_ns" 'BEGIN { printf "%.2f", a / e }')
verdict=$(awk -v r="$ratio" 'BEGIN { print (r <= 1.5 ? "meets target" : "MISSES target") }')
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
text="Agent cost per 8 MiB allocate+free pair, fake driver, $(nproc) x $cpu, $(date +%F): medians of 2000 pairs.

| Measure | Figure | Baseline in the same run | Ratio | Target |
|---|---|---|---|---|
| Added by the agent per pair | $((added / 1000)) us ($((agent / 1000)) us with it, $((plain / 1000)) us without) | $((echo_ns / 1000)) us Unix-socket echo between two processes | ${ratio}x | <= 1.5x: $verdict |

The allocation is one request to gpuoversubd, waited for through the agent's reader thread,
plus advise and prefetch calls; the free is sent, not waited for."
echo "$text"
[ -z "$results" ] || python3 "$(dirname "$0")/results_section.py" "$results" bench_agent "$text"
