#!/usr/bin/env bash
# The agent on a real GPU: a private gpuoversubd on the machine's GPU 0,
# jobs registered as the SPANK plugin would, and real programs under the
# agent. `run.sh` checks, and writes the rows of the compatibility matrix
# (matrix.sh) that ran into bench/RESULTS.md; `run.sh --bench` also
# measures and writes the GPU section there; `run.sh --list` names the
# matrix's rows. Without a GPU it says so and succeeds.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
source tests/integration/wait.bash
BUILD=${BUILD:-build}
. tests/integration/gpu/matrix.sh
bench=0
case "${1:-}" in
--bench) bench=1 ;;
--list) matrix_rows list_row; exit 0 ;;
"") ;;
*) echo "usage: tests/integration/gpu/run.sh [--bench | --list]"; exit 2 ;;
esac

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP: no NVIDIA GPU on this machine; tests/integration/gpu needs one"
	exit 0
fi
[ "$(id -u)" -eq 0 ] || { echo "tests/integration/gpu must run as root: it registers jobs as the SPANK plugin does"; exit 1; }
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH

agent=$(realpath "$BUILD/lib/libgpuoversub.so")
reg=$BUILD/tests/tools/gos_register
app=$BUILD/tests/tools/gos_testapp
gb=$BUILD/tests/integration/gpu/gpu_bench
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | tr -d .)
echo "== building the GPU programs for sm_$cc"
mkdir -p "$(dirname "$gb")"
nvcc -O2 -arch="sm_$cc" -o "$gb" tests/integration/gpu/gpu_bench.cu || exit 1
nvcc -O2 -arch="sm_$cc" -o "$(dirname "$gb")/pool_app" tests/integration/gpu/pool_app.cu -lcuda || exit 1
nvcc -O2 -arch="sm_$cc" -o "$(dirname "$gb")/stream_churn" tests/integration/gpu/stream_churn.cu || exit 1
nvcc -O2 -arch="sm_$cc" -o "$(dirname "$gb")/lanes_bench" tests/integration/gpu/lanes_bench.cu || exit 1
card_mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits -i 0)
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0)
# The daemon manages only GOS_GPU_CAPACITY_MIB of the card (the rest is its
# reserve), so the jobs' managed memory never oversubscribes the driver
# itself: a UVM oversubscription of the whole card can hang some GPUs.
total_mib=${GOS_GPU_CAPACITY_MIB:-16384}
[ "$total_mib" -lt "$card_mib" ] || total_mib=$((card_mib - 1024))
pct() { echo $((total_mib * $1 / 100)); }
# Each program gets at most this long: a hang fails its test, not the run.
limit=${GOS_GPU_STEP_TIMEOUT:-240}

work=$(mktemp -d)
daemon=
cleanup() {
	[ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
	jobs -p | xargs -r kill -9 2>/dev/null
	# GOS_GPU_KEEP=DIR keeps the programs' output, the daemon log and the status samples.
	[ -n "${GOS_GPU_KEEP:-}" ] && tar -C "$work" -czf "$GOS_GPU_KEEP/gpu-suite-work.tgz" .
	rm -rf "$work"
}
trap cleanup EXIT
cat >"$work/policy.yaml" <<YAML
socket: $work/sock
state_dir: $work/state
reports: {dir: $work/reports}
reserve: $((card_mib - total_mib))M
return_interval: 50ms
advice: {persist: 3s}
chunk_size: ${GOS_GPU_CHUNK:-32M}	# as the shipped policy; see gpuoversub.yaml(5)
YAML
"$BUILD/sbin/gpuoversubd" -c "$work/policy.yaml" 2>"$work/daemon.log" &
daemon=$!
wait_until 10 test -S "$work/sock" || { echo "gpuoversubd did not start:"; cat "$work/daemon.log"; exit 1; }

next_job=0
step() { next_job=$((next_job + 1)); "$reg" "$work/sock" step "$next_job" 0 || exit 1; }
# under JOB CMD...: runs CMD as a registered task of JOB with the agent.
under() {
	local job=$1; shift
	timeout -k 5 "$limit" env LD_PRELOAD="$agent" GPUOVERSUB_SOCKET="$work/sock" GPUOVERSUB_REQUIRED=1 \
		"$reg" "$work/sock" exec "$job" "$@"
}
status() { "$BUILD/bin/gpuoversubctl" --socket "$work/sock" --json status; }
# holding FILE PID: the gpu_bench PID, writing FILE, has its buffers
# allocated and filled, or is gone (its result then says why).
holding() { grep -q '^holding' "$1" || ! kill -0 "$2" 2>/dev/null; }
# answered N FILE PID: the gos_testapp PID has answered N commands in FILE, or is gone.
answered() { [ "$(grep -c '^ok' "$2")" -ge "$1" ] || ! kill -0 "$3" 2>/dev/null; }
# fair_shares: whether the status on stdin shows two jobs, each resident
# within a chunk of its entitlement; prints the shares.
fair_shares() {
	python3 -c '
import json, sys
g = json.load(sys.stdin)["gpus"][0]
shares = [(t["resident"], t["entitlement"]) for t in g["tenants"] if t["demand"]]
fair = all(abs(r - e) <= 64 << 20 for r, e in shares) and len(shares) == 2
print(("PASS" if fair else "FAIL"), "fair-resident-shares", [(r >> 20, e >> 20) for r, e in shares])
sys.exit(0 if fair else 1)'
}
fair_now() { status | fair_shares >/dev/null; }
failures=0
# GOS_GPU_ONLY=driver,runtime,frameworks,pagedos runs only those sections;
# a matrix row's name (run.sh --list) runs that row, frameworks all of them.
want() { [ -z "${GOS_GPU_ONLY:-}" ] || [[ ",$GOS_GPU_ONLY," == *",$1,"* ]]; }
result() {	# NAME OK(0/1) DETAIL
	if [ "$2" -eq 0 ]; then echo "PASS $1 $3"; else echo "FAIL $1 $3"; failures=$((failures + 1)); fi
}

echo "== $gpu_name, $card_mib MiB, gpuoversubd manages $total_mib MiB of it"

# 1. The driver-API program, two jobs at 60% each, data checked after pressure.
if want driver; then
step; j1=$next_job; step; j2=$next_job
half=$(( $(pct 60) / 1024 ))
cmds() { for i in $(seq "$half"); do echo "alloc b$i 1024"; done; sleep "$1";
	for i in $(seq "$half"); do echo "verify b$i"; done; echo quit; }
cmds 8 | under "$j1" "$app" >"$work/app1.out" 2>"$work/app1.err" &
p1=$!
wait_until "$limit" answered "$half" "$work/app1.out" $p1
cmds 4 | under "$j2" "$app" --via procaddress >"$work/app2.out" 2>"$work/app2.err" &
p2=$!
wait_until "$limit" answered "$half" "$work/app2.out" $p2
wait_until 30 fair_now	# if never, the snapshot below says how far off
status >"$work/status1.json"
wait $p1; r1=$?; wait $p2; r2=$?
bad=$(grep -c -v '^ok\|^ready' "$work/app1.out" "$work/app2.out" | awk -F: '{s += $2} END {print s}')
result driver-api-two-jobs-60pct $(( r1 || r2 || bad )) "($bad bad replies)"
fair_shares <"$work/status1.json" || failures=$((failures + 1))
fi

# 2. A CUDA-runtime program: integrity across evict and return.
if want runtime; then
step; j3=$next_job; step; j4=$next_job
under "$j3" "$gb" integrity "$(pct 60)" 10 >"$work/int1.out" 2>&1 &
p3=$!
wait_until "$limit" holding "$work/int1.out" $p3
under "$j4" "$gb" integrity "$(pct 60)" 3 >"$work/int2.out" 2>&1
r4=$?
wait $p3; r3=$?
result runtime-integrity $(( r3 || r4 )) "$(cat "$work/int1.out" "$work/int2.out" | tr '\n' ' ')"
fi

# 3. The compatibility matrix: real frameworks, each beside a job holding 60%.
matrix_rows run_row
if compgen -G "$work/rows/*/row.json" >/dev/null; then
	python3 bench/gpu_matrix.py bench/RESULTS.md measured "$gpu_name" "$work"/rows/*/row.json
fi

# 4. PILOT's pageDoS: a victim at 40% and a co-runner growing to 150%.
if want pagedos; then
# Plain UVM at 150% oversubscribes the driver itself, which can hang a GPU
# (or its VM): that arm runs only with GOS_GPU_PLAIN_UVM=1.
alone=$(timeout "$limit" "$gb" victim "$(pct 40)" 10 | awk '/victim/ {print $2}')
step; jv=$next_job; step; jc=$next_job
GPUOVERSUB_VERBOSE=${GOS_GPU_VERBOSE:-0} under "$jc" "$gb" integrity "$(pct 150)" 25 >"$work/dos.out" 2>&1 &
pc=$!
wait_until "$limit" holding "$work/dos.out" $pc
(while kill -0 $pc 2>/dev/null; do status >>"$work/pagedos-status.jsonl"; sleep 1; done) &
with_agent=$(under "$jv" "$gb" victim "$(pct 40)" 10 2>"$work/victim.err" | awk '/victim/ {print $2}')
wait $pc; rc=$?
uvm=not-run
if [ "${GOS_GPU_PLAIN_UVM:-0}" = 1 ]; then
	ballast=$(( card_mib - total_mib - 1024 ))
	timeout "$limit" "$gb" integrity "$ballast" 40 >"$work/ballast.out" 2>&1 &	# plain memory: leaves total_mib free
	pb=$!
	wait_until "$limit" holding "$work/ballast.out" $pb
	GPU_BENCH_MANAGED=1 timeout "$limit" "$gb" integrity "$(pct 150)" 25 >"$work/uvm-dos.out" 2>&1 &
	pc=$!
	wait_until "$limit" holding "$work/uvm-dos.out" $pc
	uvm=$(GPU_BENCH_MANAGED=1 timeout "$limit" "$gb" victim "$(pct 40)" 10 | awk '/victim/ {print $2}')
	wait $pc; kill $pb 2>/dev/null; wait $pb
fi
line="victim passes/s alone $alone, with gpuoversub $with_agent, plain UVM $uvm; co-runner data $(grep -v -e 'batch of' -e '^holding' "$work/dos.out")"
ok=$(python3 -c "
import sys
a, g, u = sys.argv[1:]
a, g = float(a or 0), float(g or 0)
print(0 if g > 0.5 * a and (u == 'not-run' or g > float(u or 0)) else 1)" "$alone" "$with_agent" "$uvm")
result pagedos-150pct $(( ok || rc )) "($line)"
fi

if [ "$bench" -eq 1 ]; then
	plain_bw=$(timeout "$limit" "$gb" bandwidth 4096 | awk '{print $2}')
	step
	agent_bw=$(under "$next_job" "$gb" bandwidth 4096 | awk '{print $2}')
	# The allocation-time prefetch, inline instead of deferred, and the noise.
	step
	echo "bandwidth with GPUOVERSUB_ALLOC_PREFETCH=inline: $(GPUOVERSUB_ALLOC_PREFETCH=inline under "$next_job" "$gb" bandwidth 4096); plain again: $(timeout "$limit" "$gb" bandwidth 4096)"
	echo "allocation with GPUOVERSUB_ALLOC_PREFETCH=inline: $(GPUOVERSUB_ALLOC_PREFETCH=inline under "$next_job" "$gb" alloc 64 200)"
	plain_alloc=$(timeout "$limit" "$gb" alloc 64 200 | awk '{print $2}')
	step
	agent_alloc=$(under "$next_job" "$gb" alloc 64 200 | awk '{print $2}')
	# The agent's reserve (GPUOVERSUB_RESERVE, off by default) against the
	# same plain cudaMalloc: the allocation loop frees and allocates one
	# size, so each allocation after the first is the reserve's, and the
	# bandwidth is over a buffer the reserve served (its allocation time
	# says whether it did).
	reserve=${GOS_GPU_RESERVE:-8G}
	step
	reserve_alloc=$(GPUOVERSUB_RESERVE=$reserve under "$next_job" "$gb" alloc 64 200 | awk '{print $2}')
	step
	read -r reserve_bw reserve_bw_alloc < <(GPUOVERSUB_RESERVE=$reserve under "$next_job" "$gb" bandwidth-reused 4096 |
		awk '{print $2, $6}')
	timeout "$limit" "$gb" alloc-parts 64 200	# where the added latency goes
	timeout "$limit" "$gb" evict-chunks 4096	# the agent's order pattern, raw
	read -r evict pinned < <(timeout "$limit" "$gb" evict 4096 | awk '{print $2, $5}')
	python3 bench/gpu_results.py "$gpu_name" "$plain_bw" "$agent_bw" "$plain_alloc" "$agent_alloc" \
		"$evict" "$pinned" "$line" "$reserve" "$reserve_alloc" "$reserve_bw" "$reserve_bw_alloc"
	# The executor's lanes, raw: 1, 2, 4 and 8 threads moving disjoint
	# ranges, as ratios to pinned copies of the same run.
	timeout "$limit" "$(dirname "$gb")/lanes_bench" "$(pct 25)" >"$work/lanes.out" || cat "$work/lanes.out"
	lanes=$(awk -v gpu="$gpu_name" -v day="$(date +%F)" '
		/^pinned/ { d2h = $3; h2d = $5 }
		/^lanes/ { n[++k] = $2; ev[k] = $4; rt[k] = $6 }
		END {
			printf "Eviction and return with the executor'"'"'s lanes, %s, %s (`make bench-gpu`, lanes_bench):\n\n", gpu, day
			print "| Lanes | Eviction GB/s | / pinned D2H | Return GB/s | / pinned H2D | Targets |"
			print "|---|---|---|---|---|---|"
			for (i = 1; i <= k; i++)
				printf "| %s | %.1f | %.3f | %.1f | %.3f | >= 0.80, >= 0.80 |\n", n[i], ev[i], ev[i] / d2h, rt[i], rt[i] / h2d
			printf "\nPinned cudaMemcpy in the same run: D2H %.1f GB/s, H2D %.1f GB/s.", d2h, h2d
		}' "$work/lanes.out")
	echo "$lanes"
	python3 bench/results_section.py bench/RESULTS.md bench_gpu_lanes "$lanes"
	# Pressure relief, end to end (bench/relief.bash, as bench_evict.sh on
	# the fake driver): job 1 holds N, job 2 allocates M, timed until all of
	# M is on the device. Residency is the driver's: gos_testapp's press
	# polls cuMemRangeGetAttribute(LAST_PREFETCH_LOCATION) over job 2's
	# buffer until the agent has prefetched all of it to the GPU, then waits
	# for those prefetches with cuCtxSynchronize. N and M in {1, 8, 32} GiB
	# are scaled to the managed capacity: N = 32 GiB is all of it (job 1
	# alone may fill it), M = 32 GiB half of it, the most job 2 is entitled
	# to beside job 1, so that every row can end.
	source bench/relief.bash
	answer_s=$limit LOG=$work/relief.err
	step; relief_job1=$next_job; step; relief_job2=$next_job
	holder() { under "$relief_job1" "$app"; }
	presser() { under "$relief_job2" "$app"; }
	# Each run starts once the daemon has released the last run's memory.
	idle() { status | python3 -c 'import json, sys; sys.exit(any(t["demand"] for t in json.load(sys.stdin)["gpus"][0]["tenants"]))'; }
	reps=${GOS_GPU_RELIEF_REPS:-10}
	relief="Pressure relief end to end, $gpu_name, $(date +%F) (\`make bench-gpu\`): gpuoversubd manages $total_mib MiB;
job 1 holds N, job 2 allocates M and is timed until all of M is on the device (last prefetch location
and a context synchronize); $reps runs each (p99: nearest rank, so the slowest of few runs). Only the
rows where job 1 holds all of the capacity evict; the others time allocation and prefetch alone.

| Job 1 holds | Job 2 allocates | Workers | Relief p50, ms | Relief p99, ms |
|---|---|---|---|---|"
	for n in 1 8 32; do
		for m in 1 8 32; do
			n_mib=$((total_mib * n / 32)) m_mib=$((total_mib * m / 64))
			piece=$((n_mib < 1024 ? n_mib : 1024))
			n_mib=$((n_mib / piece * piece))
			runs=() ok=0
			for _ in $(seq "$reps"); do
				wait_until 30 idle && us=$(relief_us "$n_mib" "$piece" "$m_mib" $((limit * 500))) || { ok=1; break; }
				runs+=("$us")
			done
			row="| $n_mib MiB ($n GiB scaled) | $m_mib MiB ($m GiB scaled) | ${GPUOVERSUB_EVICT_WORKERS:-default} |"
			if [ "$ok" -eq 0 ]; then
				row+=" $(ms "$(echo "${runs[*]}" | quantile 0.5)") | $(ms "$(echo "${runs[*]}" | quantile 0.99)") |"
			else
				row+=" failed (see relief.err) | - |"
			fi
			result "relief-$n-$m" "$ok" "$row"
			relief+=$'\n'"$row"
		done
	done
	echo "$relief"
	python3 bench/results_section.py bench/RESULTS.md bench_gpu_relief "$relief"
fi
echo "== $failures failure(s); daemon log: $(wc -l <"$work/daemon.log") lines"
[ "$failures" -eq 0 ]
