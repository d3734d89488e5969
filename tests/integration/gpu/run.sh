#!/usr/bin/env bash
# The agent on a real GPU: a private gpuoversubd on the machine's GPU 0,
# jobs registered as the SPANK plugin would, and real programs under the
# agent. `run.sh` checks (sections driver, runtime, frameworks, pagedos);
# `run.sh --bench` also measures (lanes, reserve, relief); `run.sh --list`
# names the matrix's rows. GOS_GPU_ONLY=A,B runs only those sections or
# matrix rows. Every section leaves its figures, machine-readable, in
# GOS_GPU_RESULTS (a directory; bench/gpu_results.py reads it), and in a
# source tree they are written into bench/RESULTS.md and the README at the
# end. GOS_GPU_DEADLINE (seconds since the epoch) is when the caller stops
# it: rows and runs that cannot finish by then are left out and said so
# (the GPU bundle's run.sh sets it). Without a GPU it says so and succeeds.
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

agent=$(realpath "$BUILD/lib/libgpuoversub.so")
reg=$BUILD/tests/tools/gos_register
app=$BUILD/tests/tools/gos_testapp
gb=$BUILD/tests/integration/gpu/gpu_bench
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | tr -d .)
# The GPU bundle brings the programs built for the architectures in ARCHES
# (with PTX of the last for newer ones); a source tree builds them here.
arches=$(dirname "$gb")/ARCHES
if [ -s "$arches" ] && { grep -qw "$cc" "$arches" || [ "$cc" -gt "$(tr ' ' '\n' <"$arches" | sort -n | tail -1)" ]; }; then
	echo "== the GPU programs as built for sm_$(cat "$arches")"
else
	command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
	echo "== building the GPU programs for sm_$cc"
	mkdir -p "$(dirname "$gb")"
	nvcc -O2 -arch="sm_$cc" -o "$gb" tests/integration/gpu/gpu_bench.cu || exit 1
	nvcc -O2 -arch="sm_$cc" -o "$(dirname "$gb")/pool_app" tests/integration/gpu/pool_app.cu -lcuda || exit 1
	nvcc -O2 -arch="sm_$cc" -o "$(dirname "$gb")/stream_churn" tests/integration/gpu/stream_churn.cu || exit 1
	nvcc -O2 -arch="sm_$cc" -o "$(dirname "$gb")/lanes_bench" tests/integration/gpu/lanes_bench.cu || exit 1
fi
card_mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits -i 0)
free_mib=$(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits -i 0)
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0)
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader -i 0)
# The daemon manages only GOS_GPU_CAPACITY_MIB of the card (the rest is its
# reserve), and at most the card's free memory less 1 GiB, so the jobs'
# managed memory never oversubscribes the driver itself: a UVM
# oversubscription of the whole card can hang some GPUs.
total_mib=${GOS_GPU_CAPACITY_MIB:-16384}
[ "$total_mib" -lt "$((free_mib - 1024))" ] || total_mib=$((free_mib - 1024))
pct() { echo $((total_mib * $1 / 100)); }
# Each program gets at most this long: a hang fails its test, not the run.
limit=${GOS_GPU_STEP_TIMEOUT:-240}
deadline=${GOS_GPU_DEADLINE:-$(($(date +%s) + 86400))}
left() { echo $((deadline - $(date +%s))); }
# fits SECONDS: whether that much is left before the deadline.
fits() { [ "$(left)" -ge "$1" ]; }

work=$(mktemp -d)
results=${GOS_GPU_RESULTS:-$work/results}
mkdir -p "$results/rows"
daemon=
cleanup() {
	[ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
	jobs -p | xargs -r kill -9 2>/dev/null
	# GOS_GPU_KEEP=DIR keeps the programs' output, the daemon log and the status samples.
	[ -n "${GOS_GPU_KEEP:-}" ] && tar -C "$work" -czf "$GOS_GPU_KEEP/gpu-suite-work.tgz" .
	rm -rf "$work"
}
trap cleanup EXIT
# What every section's figures were measured on.
printf 'gpu\t%s\ndriver\t%s\ncard_mib\t%s\nfree_mib\t%s\ncapacity_mib\t%s\ndate\t%s\n' \
	"$gpu_name" "$driver" "$card_mib" "$free_mib" "$total_mib" "$(date +%F)" >"$results/gpu.tsv"
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
# GOS_GPU_ONLY=driver,runtime,frameworks,pagedos,mig,lanes,reserve,relief runs
# only those sections; a matrix row's name (run.sh --list) runs that row,
# frameworks all of them. Without it: the checks, and with --bench the
# measurements too.
want() { [ -z "${GOS_GPU_ONLY:-}" ] || [[ ",$GOS_GPU_ONLY," == *",$1,"* ]]; }
measure() { if [ -z "${GOS_GPU_ONLY:-}" ]; then [ "$bench" -eq 1 ]; else want "$1"; fi; }
# result NAME OK(0/1) DETAIL: said, and kept in checks.tsv.
result() {
	local verdict=PASS
	[ "$2" -eq 0 ] || { verdict=FAIL; failures=$((failures + 1)); }
	echo "$verdict $1 $3"
	printf '%s\t%s\t%s\n' "$1" "$verdict" "$3" >>"$results/checks.tsv"
}
# figure KEY VALUE: one measured figure, kept in figures.tsv.
figure() { printf '%s\t%s\n' "$1" "$2" >>"$results/figures.tsv"; echo "$1 $2"; }

echo "== $gpu_name, driver $driver, $card_mib MiB ($free_mib free), gpuoversubd manages $total_mib MiB of it"

# 1. The driver-API program, two jobs at 60% each, data checked after pressure.
if want driver; then
step; j1=$next_job; step; j2=$next_job
half=$(( $(pct 60) / 1024 ))
# Each holds its buffers until both are measured ($work/verify), however
# long the allocations took: a fixed hold ran out under load before the
# second job had allocated.
cmds() { for i in $(seq "$half"); do echo "alloc b$i 1024"; done; wait_until "$limit" test -e "$work/verify"
	for i in $(seq "$half"); do echo "verify b$i"; done; echo quit; }
cmds | under "$j1" "$app" >"$work/app1.out" 2>"$work/app1.err" &
p1=$!
wait_until "$limit" answered "$half" "$work/app1.out" $p1
cmds | under "$j2" "$app" --via procaddress >"$work/app2.out" 2>"$work/app2.err" &
p2=$!
wait_until "$limit" answered "$half" "$work/app2.out" $p2
wait_until 30 fair_now	# if never, the snapshot below says how far off
status >"$work/status1.json"
touch "$work/verify"
wait $p1; r1=$?; wait $p2; r2=$?
bad=$(grep -c -v '^ok\|^ready' "$work/app1.out" "$work/app2.out" | awk -F: '{s += $2} END {print s}')
result driver-api-two-jobs-60pct $(( r1 || r2 || bad )) "($bad bad replies)"
shares=$(fair_shares <"$work/status1.json"); r=$?
result fair-resident-shares "$r" "${shares#* fair-resident-shares }"
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

# 3. The executor's lanes, raw: 1, 2, 4 and 8 threads moving disjoint
# ranges, against pinned copies of the same run; and the agent's eviction
# pattern, raw.
if measure lanes; then
	timeout "$limit" "$(dirname "$gb")/lanes_bench" "$(pct 25)" >"$results/lanes.out"
	result lanes-bench $? "$(tr '\n' ' ' <"$results/lanes.out")"
	timeout "$limit" "$gb" evict-chunks 4096 | tee "$results/evict-chunks.out"	# where eviction's time goes
	read -r evict pinned < <(timeout "$limit" "$gb" evict 4096 | awk '{print $2, $5}')
	figure evict_gbs "$evict"; figure pinned_d2h_gbs "$pinned"
fi

# 4. Allocation latency and kernel bandwidth against plain cudaMalloc:
# the allocation-time prefetch inline and deferred, and the agent's
# reserve (GPUOVERSUB_RESERVE, off by default). The reserve's allocation
# loop frees and allocates one size, so each allocation after the first is
# the reserve's, and the bandwidth is over a buffer the reserve served (its
# allocation time says whether it did).
if measure reserve; then
	# bw_and_alloc KEY [VAR=VALUE]: both measures under the agent so.
	bw_and_alloc() {
		step; figure "bw_$1" "$(under "$next_job" env "${@:2}" "$gb" bandwidth 4096 | awk '{print $2}')"
		step; figure "alloc_$1" "$(under "$next_job" env "${@:2}" "$gb" alloc 64 200 | awk '{print $2}')"
	}
	figure bw_plain "$(timeout "$limit" "$gb" bandwidth 4096 | awk '{print $2}')"
	figure alloc_plain "$(timeout "$limit" "$gb" alloc 64 200 | awk '{print $2}')"
	bw_and_alloc inline GPUOVERSUB_ALLOC_PREFETCH=inline
	bw_and_alloc deferred GPUOVERSUB_ALLOC_PREFETCH=deferred
	figure bw_plain_again "$(timeout "$limit" "$gb" bandwidth 4096 | awk '{print $2}')"	# the noise
	reserve=${GOS_GPU_RESERVE:-8G}
	figure reserve "$reserve"
	step
	figure alloc_reserve "$(GPUOVERSUB_RESERVE=$reserve under "$next_job" "$gb" alloc 64 200 | awk '{print $2}')"
	step
	read -r reserve_bw reserve_bw_alloc < <(GPUOVERSUB_RESERVE=$reserve under "$next_job" "$gb" bandwidth-reused 4096 |
		awk '{print $2, $6}')
	figure bw_reserve "$reserve_bw"; figure bw_reserve_alloc_us "$reserve_bw_alloc"
	timeout "$limit" "$gb" alloc-parts 64 200 | tee "$results/alloc-parts.out"	# where the added latency goes
fi

# 5. Pressure relief, end to end (bench/relief.bash, as bench_evict.sh on
# the fake driver): job 1 holds N, job 2 allocates M, timed until all of
# M is on the device. Residency is the driver's: gos_testapp's press
# polls cuMemRangeGetAttribute(LAST_PREFETCH_LOCATION) over job 2's
# buffer until the agent has prefetched all of it to the GPU, then waits
# for those prefetches with cuCtxSynchronize. N and M in {1, 8, 32} GiB
# are scaled to the managed capacity: N = 32 GiB is all of it (job 1
# alone may fill it), M = 32 GiB half of it, the most job 2 is entitled
# to beside job 1, so that every row can end. GOS_GPU_RELIEF_REPS runs
# each (10); fewer where the deadline comes first, and relief.tsv says how
# many ran.
if measure relief; then
	source bench/relief.bash
	answer_s=$limit LOG=$work/relief.err
	step; relief_job1=$next_job; step; relief_job2=$next_job
	holder() { under "$relief_job1" "$app"; }
	presser() { under "$relief_job2" "$app"; }
	# Each run starts once the daemon has released the last run's memory.
	idle() { status | python3 -c 'import json, sys; sys.exit(any(t["demand"] for t in json.load(sys.stdin)["gpus"][0]["tenants"]))'; }
	# A run takes ~3.5 s on an H100 (two contexts, up to 16 GiB allocated
	# and 8 GiB evicted), 9 cells: fewer repetitions where the deadline is near.
	reps=${GOS_GPU_RELIEF_REPS:-10} fit=$((($(left) - 10) * 10 / 315))
	[ "$fit" -ge "$reps" ] || reps=$((fit > 1 ? fit : 1))
	printf 'n_gib\tm_gib\tn_mib\tm_mib\tworkers\treps\truns\tp50_us\tp99_us\n' >"$results/relief.tsv"
	for n in 1 8 32; do
		for m in 1 8 32; do
			n_mib=$((total_mib * n / 32)) m_mib=$((total_mib * m / 64))
			piece=$((n_mib < 1024 ? n_mib : 1024))
			n_mib=$((n_mib / piece * piece))
			runs=() ok=0
			# None starts within 10 s of the deadline (the largest take ~5 s).
			for _ in $(seq "$reps"); do
				fits 10 || break
				wait_until 30 idle && us=$(relief_us "$n_mib" "$piece" "$m_mib" $((limit * 500))) || { ok=1; break; }
				runs+=("$us")
			done
			p50=- p99=-
			if [ "${#runs[@]}" -gt 0 ]; then
				p50=$(echo "${runs[*]}" | quantile 0.5) p99=$(echo "${runs[*]}" | quantile 0.99)
			fi
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$m" "$n_mib" "$m_mib" \
				"${GPUOVERSUB_EVICT_WORKERS:-default}" "$reps" "${#runs[@]}" "$p50" "$p99" >>"$results/relief.tsv"
			result "relief-$n-$m" "$ok" "N $n_mib MiB, M $m_mib MiB: ${#runs[@]} of $reps runs, p50 $p50 us, p99 $p99 us"
		done
	done
fi

# 6. The compatibility matrix: real frameworks, each beside a job holding 60%.
matrix_rows run_row
for row in "$work"/rows/*/row.json; do [ -e "$row" ] && cp "$row" "$results/rows/$(basename "$(dirname "$row")").json"; done

# 7. PILOT's pageDoS: a victim at 40% and a co-runner growing to 150%.
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
figure pagedos_alone "$alone"; figure pagedos_agent "$with_agent"; figure pagedos_uvm "$uvm"
line="victim passes/s alone $alone, with gpuoversub $with_agent, plain UVM $uvm; co-runner data $(grep -v -e 'batch of' -e '^holding' "$work/dos.out")"
ok=$(python3 -c "
import sys
a, g, u = sys.argv[1:]
a, g = float(a or 0), float(g or 0)
print(0 if g > 0.5 * a and (u == 'not-run' or g > float(u or 0)) else 1)" "$alone" "$with_agent" "$uvm")
result pagedos-150pct $(( ok || rc )) "($line)"
fi

# 8. MIG (issue 48): where a GPU here is in MIG mode with two GPU instances
# or more, a daemon of its own finds each by its UUID with its own memory;
# two jobs on two instances of one card, each filling 60% of its own, keep
# all of it on the GPU, and a third job on the first instance, at 60% too,
# makes one of that instance's two give way (the control). The suite never
# changes a GPU's MIG mode (that resets the GPU); without instances it says
# so and the row is not run.
if want mig; then
	mkdir -p "$work/mig"
	if nvidia-smi -L | grep -q "(UUID: MIG-"; then
		printf 'socket: %s\nstate_dir: %s\nreports: {dir: %s}\nreserve: 0\n' \
			"$work/mig/sock" "$work/mig/state" "$work/mig/reports" >"$work/mig/policy.yaml"
		"$BUILD/sbin/gpuoversubd" -c "$work/mig/policy.yaml" 2>"$work/mig/daemon.log" &
		mig_daemon=$!
		wait_until 10 test -S "$work/mig/sock"
		"$BUILD/bin/gpuoversubctl" --socket "$work/mig/sock" --json status >"$work/mig/status.json"
	fi
	# Two GPU instances of one card: "GPU UUID MIB" for each, or nothing.
	read -r ia a mib_a ib b mib_b < <(python3 -c 'import json, sys
try:
    gpus = json.load(open(sys.argv[1]))["gpus"]
except OSError:
    sys.exit(0)
for x in gpus:
    for y in gpus:
        if x["mig_parent"] and x["mig_parent"] == y["mig_parent"] and x["gpu"] < y["gpu"]:
            print(x["gpu"], x["uuid"], x["memory"] * 60 // 100 >> 20, y["gpu"], y["uuid"], y["memory"] * 60 // 100 >> 20)
            sys.exit(0)' "$work/mig/status.json")
	if [ -z "${b:-}" ]; then
		echo "SKIP mig-two-instances: no GPU here is in MIG mode with two GPU instances; the row is not run"
		printf 'mig-two-instances\tnot-run\tno GPU in MIG mode with two GPU instances\n' >>"$results/checks.tsv"
	else
		"$reg" "$work/mig/sock" step 901 "$ia" && "$reg" "$work/mig/sock" step 902 "$ib" && "$reg" "$work/mig/sock" step 903 "$ia"
		# on_mig UUID JOB MIB: gpu_bench holding MIB on that instance, as a task of JOB.
		on_mig() { CUDA_VISIBLE_DEVICES=$1 timeout -k 5 "$limit" env LD_PRELOAD="$agent" GPUOVERSUB_SOCKET="$work/mig/sock" \
			GPUOVERSUB_REQUIRED=1 "$reg" "$work/mig/sock" exec "$2" "$gb" integrity "$3" 10 >"$work/mig/$2.out" 2>&1; }
		# host_bytes JOB...: those jobs' bytes in host RAM now.
		host_bytes() { "$BUILD/bin/gpuoversubctl" --socket "$work/mig/sock" --json jobs |
			python3 -c 'import json, sys; print(sum(j["host"] for j in json.load(sys.stdin) if str(j["job"]) in sys.argv[1:]))' "$@"; }
		on_mig "$a" 901 "$mib_a" & pa=$!
		wait_until "$limit" holding "$work/mig/901.out" $pa
		on_mig "$b" 902 "$mib_b" & pb=$!
		wait_until "$limit" holding "$work/mig/902.out" $pb
		apart=$(host_bytes 901 902)
		on_mig "$a" 903 "$mib_a" & pc=$!
		wait_until "$limit" holding "$work/mig/903.out" $pc
		shared=$(host_bytes 901 903) other=$(host_bytes 902)
		wait $pa; ra=$?; wait $pb; rb=$?; wait $pc; rc=$?
		result mig-two-instances-60pct $(( ra || rb || rc || apart != 0 || shared == 0 || other != 0 )) \
			"(GPU $ia $a and GPU $ib $b, $mib_a and $mib_b MiB: $apart bytes in host RAM apart; with a third job on GPU $ia, $shared there and $other on GPU $ib)"
	fi
	[ -z "${mig_daemon:-}" ] || { kill "$mig_daemon"; wait "$mig_daemon" 2>/dev/null; }
fi

# In a source tree, the figures go into bench/RESULTS.md and the README.
if [ -z "${GOS_GPU_RESULTS:-}" ] && [ -e bench/RESULTS.md ]; then
	python3 bench/gpu_results.py "$results" bench/RESULTS.md README.md
fi
echo "== $failures failure(s); daemon log: $(wc -l <"$work/daemon.log") lines"
[ "$failures" -eq 0 ]
