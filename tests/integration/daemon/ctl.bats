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

# The table the daemon lists is the one it enforces: every request one byte
# past its largest payload is refused on its header, with the reason, and
# the caps are the daemon's settings.
@test "requests lists the table the daemon enforces, and its caps" {
	daemon_down
	unset D
	daemon_up "max_ranks_per_job: 77"
	run "$CTL" --socket "$D/s.sock" requests
	[ "$status" -eq 0 ]
	[[ "$output" == *"wire version 3"* ]]
	[[ "$output" == *" 11 step_register  root "* ]]
	[[ "$output" == *" 18 rank_report    agent   records 160-622600 B   none                 ranks of"* ]]
	[[ "$output" == *"  2 alloc          agent   fixed 24 B             fixed 40 B           a buffer"* ]]
	[[ "$output" == *"max_ranks_per_job 77"* ]]
	run "$CTL" --socket "$D/s.sock" --json requests
	[ "$status" -eq 0 ]
	printf '%s' "$output" >"$D/requests.json"
	python3 - "$D/s.sock" "$D/requests.json" <<'EOP'
import json, socket, struct, sys
t = json.load(open(sys.argv[2]))
assert t["caps"]["max_ranks_per_job"] == 77, t["caps"]
rows = t["requests"]
assert [r["number"] for r in rows] == list(range(1, len(rows) + 1)), rows
assert {r["caller"] for r in rows} == {"anyone", "agent", "owner", "root"}
assert next(r for r in rows if r["name"] == "requests")["caller"] == "anyone"
for r in rows:
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    s.sendall(struct.pack("<IHHII", 0x31534F47, 3, r["number"], 1, r["request_max_bytes"] + 1))
    data = b""
    while len(data) < 16 + 136:
        got = s.recv(4096)
        assert got, ("closed without a reason", r)
        data += got
    magic, version, kind, seq, length = struct.unpack_from("<IHHII", data)
    status, = struct.unpack_from("<i", data, 16)
    why = data[24:24 + 128].split(b"\0")[0].decode()
    assert kind == 0x100 and seq == 0 and status < 0, (r, kind, seq, status)
    assert "bytes" in why and ("expected" in why or "records" in why), (r, why)
    s.close()
EOP
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
