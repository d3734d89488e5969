#!/usr/bin/env bash
# Issue 24, finding 9, against the real daemon and agent on the fake driver:
# job 1 (the borrower) holds 192 MiB of a simulated 256 MiB GPU; job 2 (the
# cycler) allocates its fair share, 128 MiB, and frees it every 200 ms,
# ROUNDS times (99). Each free lends job 1 memory beyond its share that the
# next allocation takes back. The figure is job 1's moved bytes (evicted
# plus returned, from its agent's stats), with the daemon's default lending
# backoff and, in the same run, with `lending: {backoff: 0s}` (undamped).
# Target: damped at most a tenth of undamped. Needs root (it registers the
# jobs as the SPANK plugin would).
set -euo pipefail
BUILD=${BUILD:-build}
results=${1:-}
rounds=${ROUNDS:-99}
here=$(dirname "$0")
# shellcheck source=bench/relief.bash
source "$here/relief.bash"

# moved_bytes [POLICY_LINES]: job 1's moved bytes under a fresh daemon.
moved_bytes() (
	# shellcheck source=bench/private_daemon.bash
	source "$here/private_daemon.bash"
	private_daemon 256M "${1:-}"
	"$BUILD/tests/tools/gos_register" "$work/sock" step 2 0
	export LD_LIBRARY_PATH=$BUILD/tests/fakecuda FAKECUDA_MEMORY=256M FAKECUDA_STATE=$work/fake.state
	agent=$(realpath "$BUILD/lib/libgpuoversub.so")
	app() {	# app JOB: the test program as a task of JOB, in the agent
		env LD_PRELOAD="$agent" GPUOVERSUB_SOCKET="$work/sock" GPUOVERSUB_REQUIRED=1 \
			"$BUILD/tests/tools/gos_register" "$work/sock" exec "$1" "$BUILD/tests/tools/gos_testapp"
	}
	must() {	# must FD_IN FD_OUT LINE: the command, which must answer ok
		local reply
		reply=$(ask "$1" "$2" "$3")
		[ "${reply%% *}" = ok ] || { echo "'$3' answered '$reply'" >&2; cat "$work/daemon.log" >&2; return 1; }
		echo "$reply"
	}
	start borrower app 1
	for i in $(seq 24); do must "$borrower_in" "$borrower_out" "alloc b$i 8" >/dev/null; done
	start cycler app 2
	for _ in $(seq "$rounds"); do
		must "$cycler_in" "$cycler_out" "alloc batch 128" >/dev/null
		sleep 0.1
		must "$cycler_in" "$cycler_out" "free batch" >/dev/null
		sleep 0.1
	done
	read -r _ _ _ _ _ _ _ evicted returned < <(must "$borrower_in" "$borrower_out" stats)
	ask "$cycler_in" "$cycler_out" quit >/dev/null
	ask "$borrower_in" "$borrower_out" quit >/dev/null
	exec {cycler_in}>&- {cycler_out}<&- {borrower_in}>&- {borrower_out}<&-
	wait "$cycler_pid" "$borrower_pid"
	echo "$evicted $returned"
)

read -r ev_u ret_u < <(moved_bytes "lending: {backoff: 0s}")
read -r ev_d ret_d < <(moved_bytes)
mib() { awk -v b="$1" 'BEGIN {printf "%.0f", b / 1048576}'; }
undamped=$((ev_u + ret_u)) damped=$((ev_d + ret_d))
ratio=$(awk -v d="$damped" -v u="$undamped" 'BEGIN {printf "%.3f", u ? d / u : 0}')
verdict=$(awk -v d="$damped" -v u="$undamped" 'BEGIN {print (u > 0 && d * 10 <= u) ? "meets target" : "MISSES target"}')
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
text="## Churn against the daemon (lending backoff), $(date +%F)

Machine: $(nproc) x $cpu, no GPU: real gpuoversubd (userspace engine, simulated 256 MiB GPU, 2 MiB
chunks) and agents on the fake driver. Job 1 holds 192 MiB; job 2 allocates and frees 128 MiB (its
fair share) every 200 ms, $rounds times. Job 1's bytes moved, from its agent's stats; the baseline is
the same run with \`lending: {backoff: 0s}\`.

| Measure | Figure | Baseline in the same run | Ratio | Target |
|---|---|---|---|---|
| Job 1's moved bytes (evicted + returned) | $(mib "$damped") MiB ($(mib "$ev_d") + $(mib "$ret_d")) | $(mib "$undamped") MiB ($(mib "$ev_u") + $(mib "$ret_u")) undamped | ${ratio}x | <= 0.1x: $verdict |"
echo "$text"
[ -z "$results" ] || python3 "$here/results_section.py" "$results" bench_churn "$text"
[ "$verdict" = "meets target" ]
