#!/usr/bin/env bats
# gpuoversubctl against a real gpuoversubd with a simulated GPU.

load ../wait
load daemon

setup() {
	CTL=${BUILD:-build}/bin/gpuoversubctl
	daemon_up
}

teardown() {
	daemon_down
}

@test "status shows the simulated GPU" {
	run "$CTL" --socket "$D/s.sock" status
	[ "$status" -eq 0 ]
	[[ "$output" == *"GPUs from simulated"* ]]
	[[ "$output" == *"GPU 0  0000:b1:00.0  NUMA 1  (simulated)"* ]]
	[[ "$output" == *"no jobs"* ]]
	run "$CTL" --socket "$D/s.sock" --json status
	[ "$status" -eq 0 ]
	python3 -c 'import json,sys; s=json.load(sys.stdin); assert s["gpus"][0]["memory"] == 2 << 30' <<<"$output"
}

@test "jobs and report speak plainly" {
	run "$CTL" --socket "$D/s.sock" jobs
	[ "$status" -eq 0 ]
	[ "$output" = "no jobs registered" ]
	run "$CTL" --socket "$D/s.sock" report 42
	[ "$status" -eq 1 ]
	[ "$output" = "gpuoversubctl: no report for job 42 on this node" ]
	run "$CTL" --socket "$D/s.sock" report forty-two
	[ "$status" -eq 2 ]
	[[ "$output" == *"report needs a job id, not 'forty-two'"* ]]
}

@test "options may follow the command, and explain refuses unknown jobs plainly" {
	run "$CTL" status --json --socket "$D/s.sock"
	[ "$status" -eq 0 ]
	python3 -c 'import json,sys; s=json.load(sys.stdin); assert s["gpus"][0]["memory"] == 2 << 30' <<<"$output"
	run "$CTL" --socket "$D/s.sock" explain 42
	[ "$status" -eq 1 ]
	[ "$output" = "gpuoversubctl: job 42 is not running on this node" ]
	run "$CTL" explain forty-two --socket "$D/s.sock"
	[ "$status" -eq 2 ]
	[[ "$output" == *"explain needs a job id, not 'forty-two'"* ]]
}

@test "a daemon that is down is named as the cause" {
	run "$CTL" --socket "$D/none.sock" status
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot reach gpuoversubd at $D/none.sock"*"(is the daemon running?)"* ]]
	run "$CTL" frobnicate
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown command or wrong arguments: frobnicate"* ]]
}

@test "simulate is the simulator" {
	run "$CTL" simulate --quiet --policies gpuoversub examples/traces/rodinia-pair.csv
	[ "$status" -eq 0 ]
	[[ "$output" == *"gpuoversub"*"weighted shares, priority, throttle"* ]]
}

@test "a second daemon on the same socket refuses to start" {
	run "${BUILD:-build}/sbin/gpuoversubd" -c "$D/p.yaml"
	[ "$status" -eq 1 ]
	[[ "$output" == *"another gpuoversubd already serves $D/s.sock"* ]]
}

@test "a report stored by the previous release, or an older one, prints as it did; a garbled one is named" {
	mkdir -p "$D/reports"
	cp tests/unit/report/golden/report-stored.json "$D/reports/job-77.json"
	run "$CTL" --socket "$D/s.sock" report 77
	[ "$status" -eq 0 ]
	[[ "$output" == *"job 77 (uid 1000, partition gpu, account physics, qos normal)"* ]]
	[[ "$output" == *" on node n1, GPU 0 (0000:10:00.0), 3 (0000:13:00.0)"* ]]
	[[ "$output" == *"evicted 480 MiB (240 chunks), returned 160 MiB (80 chunks)"* ]]
	[[ "$output" == *"GPU 0 weight 0.5: shards x0.5 (1 of 2 shards)"* ]]
	[[ "$output" == *"GPU 3 (0000:13:00.0) counters restarted from the saved record"* ]]
	[[ "$output" == *"process 4300: 1 allocations, 2 MiB allocated"* ]]
	# Before 2026-11 a report named no node, weights or restarts.
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))
for k in ("node", "weights", "daemon_restarts", "daemon_restarts_omitted", "mpi_ranks"): del r[k]
json.dump(r, open(sys.argv[1], "w"))' "$D/reports/job-77.json"
	run "$CTL" --socket "$D/s.sock" report 77
	[ "$status" -eq 0 ]
	[[ "$output" == *"job 77 (uid 1000"* ]]
	[[ "$output" == *"GPU 0 (0000:10:00.0), 3 (0000:13:00.0)"* ]]
	[[ "$output" != *"on node"* && "$output" != *"weight"* && "$output" != *"restarted"* ]]
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); r["bytes_evicted"]="lots"
json.dump(r, open(sys.argv[1], "w"))' "$D/reports/job-77.json"
	run "$CTL" --socket "$D/s.sock" report 77
	[ "$status" -eq 1 ]
	[[ "$output" == "gpuoversubctl: the daemon's report is not one this gpuoversubctl reads: "*"must be number, but is string"* ]]
}
