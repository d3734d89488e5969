#!/usr/bin/env bats
# common/util/munge.cpp against a real munged, the one the Slurm tests
# start (harness.bash's gos_munge_start), alone: the uid a credential
# proves, and each way munged turns one down (issue 30, step 5). Needs root.

load ../wait

setup_file() {
	command -v munged >/dev/null || skip "no munged (apt-get install munge)"
	export BUILD=${BUILD:-build}
	source tests/integration/slurm/harness.bash
	GOS_DIR=$(mktemp -d /tmp/gos-munge-XXXXXX)
	export GOS_DIR GOS_MUNGE_SOCK=$GOS_DIR/munge/munge.socket
	mkdir -p "$GOS_DIR/run"
	gos_munge_start 3>&- || { stop_munged; return 1; }
}

stop_munged() {
	local pid
	pid=$(cat "$GOS_DIR/run/munged.pid" 2>/dev/null) && kill_pids "$pid"
	kill_marked "$GOS_DIR"
}

teardown_file() {
	[ -z "${GOS_DIR:-}" ] && return
	source tests/integration/slurm/harness.bash
	stop_munged
	rm -rf "$GOS_DIR"
}

setup() {
	tool=$BUILD/tests/tools/gos_munge
}

@test "a credential root seals opens with uid 0 and the payload" {
	cred=$("$tool" encode "$GOS_MUNGE_SOCK" 60 '{"job":7,"part":"x"}')
	run "$tool" decode "$GOS_MUNGE_SOCK" "$cred"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "ok 0 0" ]
	[ "${lines[1]}" = '{"job":7,"part":"x"}' ]
}

@test "a credential another user seals proves that user's uid" {
	cred=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$tool" encode "$GOS_MUNGE_SOCK" 60 part)
	run "$tool" decode "$GOS_MUNGE_SOCK" "$cred"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "ok 65534 65534" ]
}

@test "a credential opened twice is replayed the second time" {
	cred=$("$tool" encode "$GOS_MUNGE_SOCK" 60 part)
	run "$tool" decode "$GOS_MUNGE_SOCK" "$cred"
	echo "$output"
	[ "$status" -eq 0 ]
	run "$tool" decode "$GOS_MUNGE_SOCK" "$cred"
	echo "$output"
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "replayed 0 0" ]
}

@test "a credential opened after its ttl is expired" {
	sealed=$(date +%s)
	cred=$("$tool" encode "$GOS_MUNGE_SOCK" 1 part)
	# Past its second: munged stamps the credential at or after $sealed.
	wait_until 10 eval '[ "$(date +%s)" -ge $((sealed + 3)) ]'
	run "$tool" decode "$GOS_MUNGE_SOCK" "$cred"
	echo "$output"
	[ "$status" -eq 1 ]
	[ "${lines[0]%% *}" = expired ]
}

@test "a credential with one character changed is invalid" {
	cred=$("$tool" encode "$GOS_MUNGE_SOCK" 60 part)
	c=${cred:30:1}
	bad=${cred:0:30}$([ "$c" = A ] && echo B || echo A)${cred:31}
	run "$tool" decode "$GOS_MUNGE_SOCK" "$bad"
	echo "$output"
	[ "$status" -eq 1 ]
	[ "${lines[0]%% *}" = invalid ]
}

@test "no munged at the socket is neither the credential's fault nor good" {
	cred=$("$tool" encode "$GOS_MUNGE_SOCK" 60 part)
	run "$tool" decode "$GOS_DIR/no.socket" "$cred"
	echo "$output"
	[ "$status" -eq 1 ]
	[ "${lines[0]%% *}" = other ]
}
