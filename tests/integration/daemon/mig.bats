#!/usr/bin/env bats
# MIG (issue 48): a GPU in MIG mode is its instances, each a GPU of its own
# to the daemon, named by its UUID, with its own memory, so that jobs on two
# instances of one card never evict each other. The daemon finds its GPUs
# as on a real node, through libcuda.so.1 and libnvidia-ml.so.1: here the
# fake driver's, with device 1 split into two instances around a hole
# (tests/fakecuda/mig.hpp says what it models, after NVML's and CUDA's
# documentation). The jobs' programs run under the agent and see their
# instance as CUDA does, by CUDA_VISIBLE_DEVICES=MIG-<uuid>. Root: the jobs
# are registered as the SPANK plugin would.

load ../wait
load daemon

B=$(realpath "${BUILD:-build}")
REGISTER=$B/tests/tools/gos_register
CTL=$B/bin/gpuoversubctl
WHOLE=GPU-fa4ec0de-0000-4000-8000-000000000000
PARENT=GPU-fa4ec0de-0000-4000-8000-000000000001
SMALL=MIG-fa4ec0de-0001-4000-8000-000000000007	# 256 MiB, MIG index 0, GPU instance 7
LARGE=MIG-fa4ec0de-0001-4000-8000-000000000009	# 512 MiB, MIG index 2, GPU instance 9
LARGE_CI1=MIG-fa4ec0de-0001-4001-8000-000000000009	# its second compute instance, MIG index 3

setup() {
	D=$(mktemp -d)
	export FAKECUDA_DEVICES=3 FAKECUDA_MEMORY=1G FAKECUDA_MIG="1:256M,-,512M/2;2:-" FAKECUDA_STATE=$D/fakecuda
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0
	SIMULATED=none LD_LIBRARY_PATH=$B/tests/fakecuda:$B/tests/fakecuda/nvml daemon_up "reserve: 0"
	APPS=()
	declare -gA TO=()
}

teardown() {
	local fd
	for fd in "${TO[@]}"; do exec {fd}>&-; done
	[ "${#APPS[@]}" -eq 0 ] || wait "${APPS[@]}" || true
	daemon_down
}

# app NAME JOB VISIBLE: the test program as a task of JOB under the agent,
# seeing CUDA_VISIBLE_DEVICES=VISIBLE; it reads what say NAME writes.
app() {
	local fd
	mkfifo "$D/in.$1"
	"$REGISTER" "$D/s.sock" exec "$2" env LD_PRELOAD="$B/lib/libgpuoversub.so" LD_LIBRARY_PATH="$B/tests/fakecuda" \
		GPUOVERSUB_SOCKET="$D/s.sock" GPUOVERSUB_REQUIRED=1 CUDA_VISIBLE_DEVICES="$3" \
		"$B/tests/tools/gos_testapp" <"$D/in.$1" >"$D/out.$1" 2>&1 &
	APPS+=($!)
	exec {fd}>"$D/in.$1"
	TO[$1]=$fd
	wait_until 30 grep -qx ready "$D/out.$1" || { cat "$D/out.$1"; return 1; }
}

# say NAME LINE: sends LINE and waits for its answer, which it prints.
say() {
	local before
	before=$(grep -c '' "$D/out.$1")
	echo "$2" >&"${TO[$1]}"
	if ! wait_until 30 answered "$1" $((before + 1)); then
		{ echo "no answer from $1 to '$2'"; cat "$D/out.$1"; "$CTL" --socket "$D/s.sock" status; tail -n 20 "$D/log"; } >&2
		return 1
	fi
	tail -n 1 "$D/out.$1"
}

answered() { [ "$(grep -c '' "$D/out.$1")" -ge "$2" ]; }

# The daemon's GPU $1's field $2 (status --json).
gpu_field() {
	"$CTL" --socket "$D/s.sock" --json status |
		/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["gpus"][int(sys.argv[1])][sys.argv[2]])' "$1" "$2"
}

# Evictions the agent of NAME counted (stats' fifth figure).
evictions() { say "$1" stats | awk '{print $6}'; }

@test "each MIG instance is a GPU of its own: named by its UUID, its parent's bus id, its own memory; a parent in MIG mode is none, even without instances" {
	run "$CTL" --socket "$D/s.sock" --json status
	echo "$output"
	[ "$status" -eq 0 ]
	/usr/bin/python3 - "$output" "$WHOLE" "$PARENT" "$SMALL" "$LARGE" "$LARGE_CI1" <<'EOF'
import json, sys
s = json.loads(sys.argv[1])
whole, parent, small, large, large_ci1 = sys.argv[2:]
assert s["gpu_source"] == "CUDA+NVML, MIG", s["gpu_source"]
got = [(g["gpu"], g["pci_bus_id"], g["uuid"], g["mig_parent"], g["gpu_instance"], g["mig_devices"], g["memory"],
        g["capacity"]) for g in s["gpus"]]
want = [(0, "0000:40:00.0", whole, "", 0, [], 1 << 30, 1 << 30),
        (1, "0000:41:00.0", small, parent, 7, [small], 256 << 20, 256 << 20),
        (2, "0000:41:00.0", large, parent, 9, [large, large_ci1], 512 << 20, 512 << 20)]
assert got == want, got
EOF
	run "$CTL" --socket "$D/s.sock" status
	echo "$output"
	[[ $output == *"GPU 1  0000:41:00.0  $SMALL (GPU instance 7 of $PARENT)"* ]]
	[[ $output == *"GPU 2  0000:41:00.0  $LARGE (GPU instance 9 of $PARENT)"* ]]
}

@test "jobs on two instances of one card never evict each other; two jobs on one instance do" {
	"$REGISTER" "$D/s.sock" step 7 1
	"$REGISTER" "$D/s.sock" step 8 2
	"$REGISTER" "$D/s.sock" step 9 1
	app a 7 "$SMALL"
	app b 8 "$LARGE_CI1"	# a compute instance: its GPU instance's memory
	# Each fills most of its own instance: together more than either has.
	[ "$(say a 'managed x 200')" = ok ]
	[ "$(say b 'managed x 400')" = ok ]
	[ "$(say a 'verify x')" = ok ]
	[ "$(say b 'verify x')" = ok ]
	[ "$(say a 'meminfo' | awk '{print $3}')" -eq $((256 << 20)) ]
	[ "$(evictions a)" -eq 0 ]
	[ "$(evictions b)" -eq 0 ]
	[ "$(gpu_field 1 used)" -ge $((200 << 20)) ]
	[ "$(gpu_field 2 used)" -ge $((400 << 20)) ]
	# The control: a second job on the small instance, which cannot hold both.
	app c 9 "$SMALL"
	[ "$(say c 'managed x 200')" = ok ]
	[ "$(say c 'verify x')" = ok ]
	[ "$(say a 'verify x')" = ok ]
	evicted=$(($(evictions a) + $(evictions c)))
	echo "evictions on the small instance: $evicted; on the large one: $(evictions b)"
	[ "$evicted" -gt 0 ]
	[ "$(evictions b)" -eq 0 ]
	[ "$(gpu_field 1 used)" -le $((256 << 20)) ]
	for n in a b c; do say "$n" quit; done
}

@test "memory a process uses outside gpuoversub counts on its own instance only (NVML per MIG instance)" {
	# No agent: the daemon sees it only through NVML, on the instance's handle.
	mkfifo "$D/in.raw"
	CUDA_VISIBLE_DEVICES=$LARGE_CI1 LD_LIBRARY_PATH=$B/tests/fakecuda "$B/tests/tools/gos_testapp" <"$D/in.raw" >"$D/out.raw" 2>&1 &
	APPS+=($!)
	exec {fd}>"$D/in.raw"
	TO[raw]=$fd
	wait_until 30 grep -qx ready "$D/out.raw"
	[ "$(say raw 'alloc x 100')" = ok ]
	wait_until 30 external_at_least 2 $((100 << 20))
	# Once: each compute instance's handle lists its own processes.
	[ "$(gpu_field 2 external)" -eq $((100 << 20)) ]
	[ "$(gpu_field 1 external)" -eq 0 ]
	[ "$(gpu_field 0 external)" -eq 0 ]
	say raw quit
}

external_at_least() { [ "$(gpu_field "$1" external)" -ge "$2" ]; }
