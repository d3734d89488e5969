#!/usr/bin/env bash
# The agent's own cost per allocation, without a GPU: allocate+free pairs
# of 8 MiB through the test-only fake driver, with and without the agent
# (linked to a private gpuoversubd), in one run. On a GPU the driver's
# managed allocation adds to this; `make bench-gpu` measures that.
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
agent=$(run env LD_PRELOAD="$(realpath "$BUILD/lib/libgpuoversub.so")" GPUOVERSUB_SOCKET="$work/sock" \
	GPUOVERSUB_REQUIRED=1 "$BUILD/tests/tools/gos_register" "$work/sock" exec 1)
added=$(( (agent - plain) / 1000 ))
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
text="Agent cost per 8 MiB allocate+free pair, fake driver, $(nproc) x $cpu, $(date +%F):
median $((agent / 1000)) us with the agent vs $((plain / 1000)) us without (added ${added} us: one
round trip to gpuoversubd through the agent's reader thread, plus advise and prefetch calls; the free
is not waited for). Design target for the GPU figure: <= 20 us added."
echo "$text"
[ -z "$results" ] || python3 "$(dirname "$0")/results_section.py" "$results" bench_agent "$text"
