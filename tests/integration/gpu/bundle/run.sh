#!/usr/bin/env bash
# The GPU bundle's run (docs/gpu-bundle.md): all the evidence that needs a
# GPU, in priority order, within a budget of wall time, as root on a node
# with the NVIDIA driver and Python.
#   ./run.sh [--budget SECONDS] [--results DIR] [--only STAGE[,STAGE...]]
#            [--rows ROW[,ROW...]]   the matrix's rows to run (all by default;
#                                    tests/integration/gpu/run.sh --list names them)
#   ./run.sh --self-check        the check without a GPU (self-check.sh)
# Each stage is tests/integration/gpu/run.sh with its sections, in a
# process session of its own, under `timeout` at the stage's cap and the
# budget's end; whatever of that session outlives it is killed by session
# id, nothing else. Every stage that ends leaves its figures in DIR/STAGE
# (TSV and JSON, see bench/gpu_results.py), and DIR/stages.tsv says how
# each ended; on the build machine `bench/gpu_results.py DIR
# bench/RESULTS.md README.md` writes them into the tables. Exits 0 when
# every stage that ran passed (stages left out for the budget do not count).
#
# Stages, caps and estimated costs for the default budget of 540 s on an
# H100 80GB (the daemon manages 16 GiB of it, as the suite always did;
# pinned copies 25-55 GB/s, the agent's eviction 6.4 GB/s as measured on
# 2026-11-22, a CUDA context ~1 s, a framework's cold import 5-20 s):
#   bundle   cap  20, est.   6 s  self-check.sh: the bundle loads and works on
#                                 the fake driver (9 s in a bare root on 2 CPUs)
#   sanity   cap  60, est. ~40 s  nvidia-smi; two gos_testapp jobs of 9.6 GiB in
#                                 1 GiB pieces held 8 and 4 s, verified after
#                                 pressure; two gpu_bench integrity runs (10, 3 s)
#   lanes    cap  45, est. ~25 s  lanes_bench on 4 GiB: 4 lane counts x 2
#                                 directions x 3 x 4 GiB / ~25 GB/s ~ 4 s, plus
#                                 advice and pinned baselines; evict and
#                                 evict-chunks of 4 GiB at ~6.4 GB/s ~ 2 s each
#   reserve  cap  50, est. ~35 s  10 gpu_bench processes (~1-2 s of context each):
#                                 bandwidth over 4 GiB, 200 x 64 MiB allocations
#                                 (~0.1 s), an 8 GiB reserve populated (~2 s)
#   relief   cap 110, est. ~3.5 s a run (two contexts, up to 16 GiB allocated and
#                                 8 GiB evicted) x 9 cells: the suite runs
#                                 (time left - 10) / 31.5 = 3 repetitions at this
#                                 cap (10 with 330 s)
#   matrix   the rest, ~240 s     15 rows, each run without the agent, then under
#                                 it beside a holder of 60% for 10 s: 25-45 s a
#                                 row (two cold imports, the work, the press),
#                                 ~500 s in full, so 5-9 rows fit: PyTorch's 7
#                                 first, then JAX, CuPy, Numba, Triton, pools,
#                                 threads. A row starts only with 60 s left; the
#                                 others say "not run: budget", and a second run
#                                 with --only matrix --rows ... takes them
#   margin    15 s                the kill grace and the summary
# Estimates from the code and the 2026-11-22 figures, not yet measured as
# stages: the first GPU run's stages.tsv gives each stage's real cost.
set -uo pipefail
cd "$(dirname "$0")" || exit 1
budget=540 results='' only='' rows=frameworks
while [ $# -gt 0 ]; do
	case $1 in
	--budget) budget=${2:-}; shift 2 ;;
	--results) results=${2:-}; shift 2 ;;
	--only) only=${2:-}; shift 2 ;;
	--rows) rows=${2:-}; shift 2 ;;
	--self-check) exec ./self-check.sh ;;
	*) echo "usage: run.sh [--budget SECONDS] [--results DIR] [--only STAGE,...] [--rows ROW,...] | --self-check"; exit 2 ;;
	esac
done
[[ $budget =~ ^[0-9]+$ ]] && [ "$budget" -ge 30 ] || { echo "run.sh: --budget takes whole seconds, at least 30: '$budget'"; exit 2; }
results=${results:-results-$(date +%Y%m%d-%H%M%S)}

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP: no NVIDIA GPU on this machine (nvidia-smi finds none); run.sh needs one. ./run.sh --self-check checks the bundle without."
	exit 0
fi
[ "$(id -u)" -eq 0 ] || { echo "run.sh must run as root: it registers jobs as the SPANK plugin does"; exit 1; }
mkdir -p "$results" || exit 1
results=$(cd "$results" && pwd)
cp MANIFEST "$results/"
nvidia-smi >"$results/nvidia-smi.txt" 2>&1
end=$(($(date +%s) + budget - 15))

# session_kill SID: kills what is left of the stage's process session.
session_kill() {
	local stat pid
	for stat in /proc/[0-9]*/stat; do
		pid=${stat#/proc/}; pid=${pid%/stat}
		read -r -a f < <(sed 's/.*) //' "$stat" 2>/dev/null) || continue
		[ "${f[3]:-}" = "$1" ] && kill -9 "$pid" 2>/dev/null
	done
}

printf 'stage\tstatus\tseconds\tcap\n' >"$results/stages.tsv"
failed=0
# stage NAME CAP COMMAND...: COMMAND within CAP seconds or what is left of
# the budget, whichever is less, its figures in DIR/NAME.
stage() {
	local name=$1 cap=$2 left t0 rc status sid
	shift 2
	[ -z "$only" ] || [[ ",$only," == *",$name,"* ]] || return 0
	left=$((end - $(date +%s)))
	[ "$cap" -le "$left" ] || cap=$left
	if [ "$cap" -lt 20 ]; then
		printf '%s\tskipped: %s s left of the budget\t0\t%s\n' "$name" "$left" "$cap" >>"$results/stages.tsv"
		echo "== $name: skipped, $left s left of the budget"
		return 0
	fi
	echo "== $name: at most $cap s"
	mkdir -p "$results/$name"
	t0=$(date +%s)
	timeout -k 10 "$cap" setsid bash -c 'echo $$ >"$0"; exec "$@"' "$results/$name/session" \
		env BUILD=build GOS_GPU_RESULTS="$results/$name" GOS_GPU_DEADLINE=$((t0 + cap - 5)) \
		GOS_GPU_STEP_TIMEOUT=$((cap < 240 ? cap : 240)) "$@" > >(tee "$results/$name/log") 2>&1
	rc=$?	# not waiting for tee: what the stage left may hold its pipe open until killed here
	sid=$(cat "$results/$name/session" 2>/dev/null) && session_kill "$sid"
	case $rc in
	0) status=pass ;;
	124 | 137) status="timeout at $cap s" ;;
	*) status="fail (exit $rc)" ;;
	esac
	[ "$rc" -eq 0 ] || failed=$((failed + 1))
	printf '%s\t%s\t%s\t%s\n' "$name" "$status" $(($(date +%s) - t0)) "$cap" >>"$results/stages.tsv"
}
suite=tests/integration/gpu/run.sh

stage bundle 20 ./self-check.sh
stage sanity 60 env GOS_GPU_ONLY=driver,runtime "$suite"
stage lanes 45 env GOS_GPU_ONLY=lanes "$suite"
stage reserve 50 env GOS_GPU_ONLY=reserve "$suite"
stage relief 110 env GOS_GPU_ONLY=relief "$suite"
stage matrix $((end - $(date +%s))) env GOS_GPU_ONLY="$rows" "$suite"
echo "== stages (name, how it ended, seconds, cap):"
column -t -s $'\t' "$results/stages.tsv" 2>/dev/null || cat "$results/stages.tsv"
echo "== results in $results: copy it to the build machine and run"
echo "   bench/gpu_results.py $results bench/RESULTS.md README.md"
# One file to carry back (the device tool returns few files, two folders deep).
tar -C "$(dirname "$results")" -czf "$results.tgz" "$(basename "$results")" && echo "   (packed: $results.tgz)"
[ "$failed" -eq 0 ]
