#!/usr/bin/env bats
# Issue 13, finding 2 and 7: files root writes and the policy it reads.
# Ordinary neighbours (hostile.bash) plant links, records and sockets in the
# daemon's directories wherever an admin left them writable; the daemon
# must refuse such a directory at start, saying why, and never write
# through a link. The policy loader refuses what is no policy, fast.

load ../wait
load hostile
load ../daemon/daemon

setup() {
	GPUD=${BUILD:-build}/sbin/gpuoversubd
	CTL=${BUILD:-build}/bin/gpuoversubctl
	D=$(mktemp -d)
	chmod 755 "$D"
	mkdir -m 755 "$D/run" "$D/reports" "$D/prom"
	mkdir -m 700 "$D/state"
	# Root's file a planted link points at; it must never change.
	PRECIOUS=$D/precious
	echo "root's own" >"$PRECIOUS"
	neighbours_up
}

teardown() {
	[ -z "${PID:-}" ] || daemon_down
	neighbours_down
	rm -rf "$D"
}

policy() {
	cat >"$D/p.yaml" <<EOP
socket: $D/run/s.sock
state_dir: $D/state
reports: {dir: $D/reports}
exporter: {textfile: $D/prom/gpuoversub.prom, period: 100ms}
simulated_gpus:
  - {memory: 2G}
EOP
}

# The daemon started on the policy must refuse within a bounded time (a
# daemon that starts is stopped by timeout: the test then fails, not hangs).
refused_at_start() {
	policy
	run timeout 10 "$GPUD" -c "$D/p.yaml"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$1 $2 is owned by uid $3"* ]]
	[[ "$output" == *"it must be owned by root and writable by no one else (chown root $2 && chmod go-w $2)"* ]]
	[ ! -S "$D/run/s.sock" ]
	# --check, the unit's ExecStartPre, says the same.
	run timeout 10 "$GPUD" --check -c "$D/p.yaml"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$1 $2 is owned by uid $3"* ]]
}

@test "links a neighbour plants in a world-writable report directory: the daemon refuses it, root's file intact" {
	chmod 1777 "$D/reports"
	as_neighbour 1 ln -s "$PRECIOUS" "$D/reports/job-5.json"
	as_neighbour 1 ln -s "$PRECIOUS" "$D/reports/job-5.json.tmp"
	refused_at_start "report directory" "$D/reports" "0 (root) with mode 1777"
	[ "$(cat "$PRECIOUS")" = "root's own" ]
}

@test "links a neighbour plants in a group-writable textfile directory: the daemon refuses it, root's file intact" {
	chgrp gos-nb1 "$D/prom"
	chmod 775 "$D/prom"
	as_neighbour 1 ln -s "$PRECIOUS" "$D/prom/gpuoversub.prom.tmp"
	refused_at_start "textfile directory" "$D/prom" "0 (root) with mode 0775"
	[ "$(cat "$PRECIOUS")" = "root's own" ]
}

@test "a state directory a neighbour owns, with a job record planted in it: refused, the job never resumed" {
	chown gos-nb1 "$D/state"
	plant_record "$D/state/job-101.json"
	refused_at_start "state directory" "$D/state" "$(neighbour_uid 1) (gos-nb1) with mode 0700"
	[ -f "$D/state/job-101.json" ]	# left for the admin, not read
}

@test "a record that is not the daemon's in its own state directory is moved aside, not resumed" {
	# As a hole of old left them: a neighbour's file and a link.
	plant_record "$D/state/job-101.json"
	chown gos-nb1 "$D/state/job-101.json"
	plant_record "$D/elsewhere.json"
	ln -s "$D/elsewhere.json" "$D/state/job-102.json"
	policy
	"$GPUD" -c "$D/p.yaml" 2>"$D/log" &
	PID=$!
	wait_until 30 gpuoversubd_listens "$D/run/s.sock"
	run "$CTL" --socket "$D/run/s.sock" jobs
	[ "$status" -eq 0 ]
	[ "$output" = "no jobs registered" ]
	grep -q "job-101.json: is owned by uid $(neighbour_uid 1), not by the daemon's uid 0" "$D/log"
	grep -q "job-102.json: is a symbolic link, not a record the daemon wrote" "$D/log"
	[ -f "$D/state/job-101.json.bad" ] && [ -L "$D/state/job-102.json.bad" ]
}

@test "a reload after the report directory became world-writable is refused, the running policy kept" {
	policy
	"$GPUD" -c "$D/p.yaml" 2>"$D/log" &
	PID=$!
	wait_until 30 gpuoversubd_listens "$D/run/s.sock"
	chmod 1777 "$D/reports"
	kill -HUP "$PID"
	wait_until 10 grep -q "reload: keeping the running policy: report directory $D/reports is owned by uid 0 (root) with mode 1777" "$D/log"
	! grep -q "reload: policy .* applied" "$D/log"
}

@test "a socket directory a neighbour owns: the daemon refuses to start, saying why" {
	chown gos-nb1 "$D/run"
	refused_at_start "socket directory" "$D/run" "$(neighbour_uid 1) (gos-nb1) with mode 0755"
}

@test "a neighbour's directory above the daemon's: refused, since they could swap the directory" {
	mkdir -m 755 "$D/nb"
	chown gos-nb1 "$D/nb"
	policy
	sed -i "s|^state_dir: .*|state_dir: $D/nb/state|" "$D/p.yaml"
	run timeout 10 "$GPUD" -c "$D/p.yaml"
	[ "$status" -eq 1 ]
	[[ "$output" == *"state directory $D/nb/state lies in $D/nb, owned by uid $(neighbour_uid 1) (gos-nb1)"* ]]
	[ ! -e "$D/nb/state" ]	# nothing created in the neighbour's directory
}

@test "a neighbour's link in a sticky directory, pointing at root's own directory: refused by --check and at start" {
	# Issue 24, finding 8: stat followed the link, saw root's directory and
	# passed; the neighbour then re-pointed it at their own.
	mkdir -m 1777 "$D/tmp"
	as_neighbour 1 ln -s "$D/reports" "$D/tmp/reports"
	policy
	sed -i "s|^reports: .*|reports: {dir: $D/tmp/reports}|" "$D/p.yaml"
	run timeout 10 "$GPUD" --check -c "$D/p.yaml"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"report directory $D/tmp/reports is a symbolic link, $D/tmp/reports, owned by uid $(neighbour_uid 1) (gos-nb1)"* ]]
	run timeout 10 "$GPUD" -c "$D/p.yaml"
	[ "$status" -eq 1 ]
	[ ! -S "$D/run/s.sock" ]
	# Root's own link there is root's word: accepted.
	rm "$D/tmp/reports"
	ln -s "$D/reports" "$D/tmp/reports"
	run timeout 10 "$GPUD" --check -c "$D/p.yaml"
	echo "$output"
	[ "$status" -eq 0 ]
}

# A valid job record of job 101 for uid gos-nb1, as the daemon writes them.
plant_record() {
	python3 - "$1" "$(neighbour_uid 1)" <<'PY'
import json, sys
rec = {"version": 1, "job": 101, "uid": int(sys.argv[2]), "partition": "", "account": "", "qos": "",
       "factor_milli": 0, "size_limit": 0, "gpus": [{"node_gpu": 0, "base": {}}], "steps": [0], "pids": [],
       "started": 0, "ended": 0, "latency_buckets": [0] * 72, "ranks": [], "advice_events": 0}
json.dump(rec, open(sys.argv[1], "w"))
PY
}

# The loader, through the unit's ExecStartPre: each refusal is one clear
# line, and fast (timeout keeps a regression from hanging the suite).
check_refuses() {
	local start=$SECONDS
	run timeout 20 "$GPUD" --check -c "$1"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$2"* ]]
	[ $((SECONDS - start)) -le 2 ]
}

@test "the policy loader refuses a directory, /dev/zero, a FIFO and an oversize file at once" {
	check_refuses "$D" "$D: is a directory; a regular file is needed (the policy file)"
	check_refuses /dev/zero "/dev/zero: is a device; a regular file is needed (the policy file)"
	mkfifo "$D/fifo"
	check_refuses "$D/fifo" "$D/fifo: is a FIFO; a regular file is needed (the policy file)"
	head -c 1100000 /dev/zero | tr '\0' '#' >"$D/big.yaml"
	check_refuses "$D/big.yaml" "$D/big.yaml: is 1100000 bytes, more than the limit of 1 MiB (the policy file)"
}

@test "the policy loader refuses 1 MB of nested flow mappings within a second" {
	python3 -c 'n = ((1 << 20) - 2) // 5; print("{a: " * n + "1" + "}" * n)' >"$D/nested.yaml"
	[ "$(stat -c %s "$D/nested.yaml")" -gt 1000000 ]
	check_refuses "$D/nested.yaml" "$D/nested.yaml:1:129: nested more than 32 levels deep"
	local t0 t1
	t0=$(date +%s%N)
	timeout 20 "$GPUD" --check -c "$D/nested.yaml" 2>/dev/null && false
	t1=$(date +%s%N)
	echo "refused in $(((t1 - t0) / 1000000)) ms" >&3
	[ $(((t1 - t0) / 1000000)) -lt 1000 ]
}
