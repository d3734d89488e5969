#!/usr/bin/env bats
# The MPI rank hooks under real Open MPI: mpirun -np 4 on localhost, each
# rank on its own simulated GPU of a real gpuoversubd, the agent and
# libgpuoversub_mpi.so preloaded, the fake CUDA driver. Needs root (it
# registers jobs as the SPANK plugin would).

load ../procs

setup_file() {
	export B=$(realpath "${BUILD:-build}") D=$(mktemp -d /tmp/gos-mpi-XXXXXX)
	cat >"$D/p.yaml" <<YAML
socket: $D/sock
state_dir: $D/state
reports: {dir: $D/reports}
reserve: 0
chunk_size: 2M
return_interval: 50ms
advice: {persist: 1s}
simulated_gpus:
  - {memory: 256M, numa_node: 0, pci_bus_id: '0000:17:00.0'}
  - {memory: 256M, numa_node: 0, pci_bus_id: '0000:18:00.0'}
  - {memory: 256M, numa_node: 0, pci_bus_id: '0000:19:00.0'}
  - {memory: 256M, numa_node: 0, pci_bus_id: '0000:1a:00.0'}
YAML
	"$B/sbin/gpuoversubd" -c "$D/p.yaml" 2>"$D/daemon.log" 3>&- &
	echo $! >"$D/daemon.pid"
	wait_until 30 gpuoversubd_listens "$D/sock"
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
}

teardown_file() {
	kill "$(cat "$D/daemon.pid")"
	kill_marked "$D"	# ranks a failed test left behind
	rm -rf "$D"
}

# mpirun_job JOB PRELOAD PROGRAM ARGS...: 4 ranks as tasks of JOB, on
# however few cores. --oversubscribe on the command line is what Open MPI
# 4.1, 5 and 6 all take: 5 and 6 (PRRTE) ignore OMPI_MCA_rmaps_base_oversubscribe,
# and their own variables differ (PRTE_MCA_rmaps_default_mapping_policy in 5,
# PRTE_MCA_mapby in 6).
mpirun_job() {
	local job=$1 preload=$2; shift 2
	"$B/tests/tools/gos_register" "$D/sock" step "$job" 0,1,2,3
	GOS_MARK=$D "$B/tests/tools/gos_register" "$D/sock" exec "$job" timeout -k 5 60 mpirun -np 4 --oversubscribe -x LD_LIBRARY_PATH="$B/tests/fakecuda" -x FAKECUDA_DEVICES="${NDEV:-4}" \
		-x FAKECUDA_MEMORY=256M -x FAKECUDA_STATE="$D/fakecuda-$job" -x LD_PRELOAD="$preload" \
		-x GPUOVERSUB_SOCKET="$D/sock" -x GPUOVERSUB_REQUIRED=1 -x SLURM_JOB_ID="$job" \
		-x ASAN_OPTIONS="$asan" "$@"
}
# Sanitizer build: Open MPI leaks by design at finalize, from components it
# has unloaded by then, so LeakSanitizer cannot be told which leaks are its.
asan=verify_asan_link_order=0:detect_leaks=0
hooks="$(realpath "${BUILD:-build}")/lib/libgpuoversub.so:$(realpath "${BUILD:-build}")/lib/libgpuoversub_mpi.so"

@test "every rank registers its rank, local rank and node, and the exchange agrees on every rank" {
	run mpirun_job 1 "$hooks" "$B/tests/integration/mpi/gos_mpi_app" basic
	[ "$status" -eq 0 ]
	for r in 0 1 2 3; do
		[[ "$output" == *"rank $r of 4 local $r ok"* ]]
		grep -q "job 1: pid [0-9]* is MPI rank $r of 4 (local $r) on " "$D/daemon.log"
	done
	[ "$(grep -c '^rank [0-3] exchange ' <<<"$output")" -eq 4 ]
	[ "$(grep '^rank [0-3] exchange ' <<<"$output" | cut -d' ' -f4- | sort -u | wc -l)" -eq 1 ]	# one table
	grep '^rank 0 exchange ' <<<"$output" | grep -q ' 0:1:1.00:.* 3:1:1.00:'	# all managed, none oversubscribed
}

@test "a rank oversubscribed for longer than advice.persist gets advice; its cold buffer is pinned and leaves first" {
	run mpirun_job 2 "$hooks" "$B/tests/integration/mpi/gos_mpi_app" pressure 96
	echo "$output"	# shown only when the test fails
	[ "$status" -eq 0 ]
	# The callback ran with the rank, the pinned bytes and the other GPUs' headroom.
	[[ "$output" == *"rank 0 advice rank 0 local 0 action 2 pinned 96 ngpus 3 headroom 248"* ]]
	cold=$(sed -n 's/^rank 0 where cold \([0-9]*\) \([0-9]*\)$/\2/p' <<<"$output")
	hot=$(sed -n 's/^rank 0 where hot \([0-9]*\) \([0-9]*\)$/\2/p' <<<"$output")
	[ "$cold" -gt 0 ]	# MiB of the pinned buffer in host RAM
	[ "$hot" -eq 0 ]	# the high-priority buffer stayed on the device
	grep '^rank 0 exchange ' <<<"$output" | grep -q ' 0:1:1\.[1-9][0-9]*:0 1:1:1.00:248'	# rank 0 under pressure, rank 1 has room
	[ "$(grep -c 'of 4 local [0-3] ok' <<<"$output")" -eq 4 ]
}

@test "rank 0's gather lands in the job's report, one record per rank" {
	run mpirun_job 3 "$hooks" "$B/tests/integration/mpi/gos_mpi_app" pressure 96
	[ "$status" -eq 0 ]
	"$B/tests/tools/gos_register" "$D/sock" end 3
	wait_until 20 test -f "$D/reports/job-3.json"
	python3 - "$D/reports/job-3.json" <<'PY'
import json, sys
r = {x["rank"]: x for x in json.load(open(sys.argv[1]))["mpi_ranks"]}
assert sorted(r) == [0, 1, 2, 3], r
assert all(x["exchanges"] == 1 and x["managed"] and x["node"] for x in r.values()), r
assert r[0]["advice"] >= 1 and r[0]["pinned_bytes"] == 96 << 20, r[0]
assert all(r[i]["advice"] == 0 and r[i]["pinned_bytes"] == 0 for i in (1, 2, 3)), r
assert sorted(x["local_rank"] for x in r.values()) == [0, 1, 2, 3], r
PY
}

@test "a rank killed with kill -9 does not leave the others hanging in the hooks" {
	mpirun_job 4 "$hooks" "$B/tests/integration/mpi/gos_mpi_app" hold 60 >"$D/hold.out" 2>&1 &
	job=$!
	wait_until 30 all_holding
	victim=$(sed -n 's/^rank 2 pid \([0-9]*\) holding$/\1/p' "$D/hold.out")
	[ -n "$victim" ]
	kill -9 "$victim"
	start=$SECONDS
	wait "$job" || true
	[ $((SECONDS - start)) -lt 40 ]	# mpirun took the job down, well before the 60 s hold
	[ -z "$(marked_pids "$D")" ]	# no rank left
	# The daemon let the dead ranks go: nothing of job 4 is left on the GPUs.
	wait_until 20 job_gone 4
}

all_holding() { [ "$(grep -c holding "$D/hold.out")" -eq 4 ]; }

job_gone() {	# JOB: none of its tenants holds memory any more
	"$B/bin/gpuoversubctl" --socket "$D/sock" --json status | python3 -c '
import json, sys
sys.exit(0 if all(t["demand"] == 0 for g in json.load(sys.stdin)["gpus"] for t in g["tenants"] if t["job"] == int(sys.argv[1])) else 1)' "$1"
}

@test "an MPI program that knows nothing of gpuoversub runs the same with the hooks preloaded" {
	for preload in "$B/lib/libgpuoversub_mpi.so" "$hooks"; do
		run mpirun_job 5 "$preload" "$B/tests/integration/mpi/mpi_plain"
		[ "$status" -eq 0 ]
		[ "$(grep -c '^rank [0-3] ok$' <<<"$output")" -eq 4 ]
	done
}

@test "the MPI example moves work from a rank under pressure to one with headroom" {
	# Four ranks on three GPUs: ranks 0 and 3 share GPU 0 and overfill it.
	NDEV=3 run mpirun_job 6 "$hooks" "$B/examples/mpi/balance" 64 10
	[ "$status" -eq 0 ]
	[[ "$output" == *"step 5: rank 0 is at 1."*"x its fair share; rank 1 has "*" MiB of headroom: move work from 0 to 1"* ]]
	[[ "$output" == *"done: 4 ranks, 10 steps"* ]]
}

@test "the hooks library exports only the wrapped calls and the exchange, and is hardened" {
	run bash -c "nm -D --defined-only $B/lib/libgpuoversub_mpi.so | awk '{print \$3}' | sort | tr '\n' ' '"
	[ "$output" = "MPI_Finalize MPI_Init MPI_Init_thread gpuoversub_mpi_exchange " ]
	readelf -d "$B/lib/libgpuoversub_mpi.so" | grep -q 'BIND_NOW\|FLAGS.*NOW'
	readelf -l "$B/lib/libgpuoversub_mpi.so" | grep -q GNU_RELRO
	readelf -d "$B/lib/libgpuoversub_mpi.so" | grep -q 'NEEDED.*libmpi'
}
