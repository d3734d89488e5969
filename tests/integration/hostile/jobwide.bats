#!/usr/bin/env bats
# Hostile peers against a real gpuoversubd's job-wide door (docs/jobwide.md,
# "The channel", check 1; issue 30, step 6): raw frames over TCP
# (jobwide_peer.py), no Slurm and no munged. Every check here comes before
# MUNGE, and every frame is for a job the daemon does not know, so a valid
# one is answered `busy` (counted as busy_unknown_job), the door's own
# limits `busy` too (busy_address_full, busy_door_full: told apart by the
# exporter's gpuoversub_jobwide_refused_total{reason}). The door listens on
# 127.0.0.1; peers speak from other loopback addresses (127.0.0.2, ...) to
# be other addresses, and as root from ports below 1024 (--reserved), as the
# daemons' senders do; a neighbour (a user) cannot, and its every connection
# is refused at once (issue 50). A failed test prints the daemon's log.

load ../wait
load ../daemon/daemon
load hostile

PEER_SRC=$BATS_TEST_DIRNAME/jobwide_peer.py
CTL=${BUILD:-build}/bin/gpuoversubctl

# A TCP port no socket here uses (as slurm_free_port, for one port).
free_port() {
	local ephemeral=32768 p _
	read -r ephemeral _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
	for _ in $(seq 50); do
		p=$((10000 + RANDOM % (ephemeral - 10001)))
		[ -z "$(ss -Htan "( sport = :$p )" 2>/dev/null)" ] && break
	done
	echo "$p"
}

setup() {
	D=$(mktemp -d)
	PORT=$(free_port)
	PEER=$PEER_SRC
	BG=()
}

teardown() {
	local pid
	[ -n "${BATS_TEST_COMPLETED:-}" ] || { echo "# gpuoversubd's log:"; cat "$D/log" 2>/dev/null; }
	[ -z "${HOLD_IN:-}" ] || exec {HOLD_IN}>&-
	for pid in "${BG[@]}"; do kill_pids "$pid" || true; done
	neighbours_down
	daemon_down
}

door_listens() {
	[ -n "$(ss -Htln "( sport = :$PORT )")" ]
}

# door_up [ADMIN_COMMENT]: the daemon with its door on PORT (when
# reports.admin_comment is true, as unless told) and the exporter's
# textfile D/metrics.prom every 100 ms.
door_up() {
	REPORTS="admin_comment: ${1:-true}" daemon_up "jobwide: {port: $PORT, listen: 127.0.0.1}
exporter: {textfile: $D/metrics.prom, period: 100ms}"
	if [ "${1:-true}" = true ]; then wait_until 30 door_listens || { cat "$D/log"; return 1; }; fi
}

# The peer as root, from reserved ports.
peer() {
	"$PEER" "$PORT" "$@" --reserved
}

# The daemon's CPU time so far, in clock ticks (utime + stime).
daemon_cpu() {
	awk '{ print $14 + $15 }' "/proc/$PID/stat"
}

# The exporter's count of REASON (gpuoversub_jobwide_refused_total), 0 if none.
refused() {
	local n
	n=$(awk -v m="gpuoversub_jobwide_refused_total{reason=\"$1\"}" '$1 == m { print $2 }' "$D/metrics.prom" 2>/dev/null)
	echo "${n:-0}"
}

refused_is() {
	[ "$(refused "$1")" = "$2" ]
}

# Now in milliseconds.
ms() {
	echo $(($(date +%s%N) / 1000000))
}

# A valid frame from ADDR is answered busy because its job is unknown, as
# the door answers when it has room: the count of busy_unknown_job goes up.
answered_normally() {
	local before answer
	before=$(refused busy_unknown_job)
	answer=$(peer frame --from "$1") && [ "$answer" = busy ] &&
		wait_until 5 refused_is busy_unknown_job $((before + 1)) 2>/dev/null
}

@test "a frame whose header claims more than 16 KiB is refused on its header, its body never sent, and closed" {
	door_up
	run peer oversize
	echo "$output"
	[ "${lines[0]}" = "refused oversize" ]
	[ "${lines[1]}" = eof ]
	# A length near 4 GiB: no overflow lets it through.
	run peer oversize --cred 4294967295
	echo "$output"
	[ "${lines[0]}" = "refused oversize" ]
	[ "${lines[1]}" = eof ]
	wait_until 10 refused_is oversize 2
	answered_normally 127.0.0.1
}

@test "a slow frame is cut off within the door's 5 s, while others are answered at once" {
	door_up
	"$PEER" "$PORT" slow --reserved >"$D/slow.out" &
	BG+=($!)
	wait_until 10 grep -q '^ready' "$D/slow.out"
	local t0 took
	t0=$(ms)
	run peer frame
	took=$(($(ms) - t0))
	echo "answer '$output' after $took ms"
	[ "$output" = busy ]
	[ "$took" -lt 2000 ]
	run peer frame --from 127.0.0.2
	[ "$output" = busy ]
	wait_until 15 grep -q '^closed after' "$D/slow.out"
	cat "$D/slow.out"
	# Cut off at 5 s after its accept, which came before its header: 4 s
	# at least (one byte a second kept coming), 10 s at most; no answer.
	awk '/^closed after/ { exit !($3 >= 4 && $3 <= 10 && NF == 3) }' "$D/slow.out"
	refused_is busy_unknown_job 2 || wait_until 5 refused_is busy_unknown_job 2
}

@test "300 connections from one address: 4 are let in, the rest answered busy; others are served meanwhile and after" {
	door_up
	local fds0
	fds0=$(ls "/proc/$PID/fd" | wc -l)
	mkfifo "$D/hold.in"
	"$PEER" "$PORT" hold 300 --probe 127.0.0.2 --reserved <"$D/hold.in" >"$D/hold.out" &
	BG+=($!)
	exec {HOLD_IN}>"$D/hold.in"
	wait_until 40 grep -q '^held' "$D/hold.out"
	cat "$D/hold.out"
	# The probe, from another address, came while the 4 were let in: its
	# busy is its unknown job's, not the door's.
	grep -qx 'probe busy' "$D/hold.out"
	# The 4 let in are closed after 5 s with no answer; the others at once.
	grep -qx 'answers busy=296 silent=4 open=0 other=0' "$D/hold.out"
	wait_until 10 refused_is busy_address_full 296
	refused_is busy_unknown_job 1
	[ "$(refused busy_door_full)" = 0 ]
	# Logged once, not 296 times.
	[ "$(grep -c 'job-wide door: busy_address_full from 127.0.0.1' "$D/log")" = 1 ]
	# The peer still holds its 300 sockets: the daemon holds none of them.
	[ -z "$(ss -Htn state established "( sport = :$PORT )")" ]
	[ "$(ls "/proc/$PID/fd" | wc -l)" -le $((fds0 + 2)) ]
	exec {HOLD_IN}>&-
	HOLD_IN=
	wait_until 10 gone "${BG[@]}"
	answered_normally 127.0.0.1
	refused_is busy_address_full 296
}

# Issue 50, findings 3 and 4: a user's connections, idle or flooding, from
# one address or from 100, spend none of the door's limits, cost the daemon
# little, and root's part from the same address is answered meanwhile.
@test "a neighbour's connections are refused at once: idle or flooding from 100 addresses, they spend no limit and root is answered meanwhile" {
	door_up
	neighbours_up
	PEER=$(for_neighbours "$PEER_SRC") CTL=$(for_neighbours "$CTL")
	# 8 idle connections from the door's own address: each closed at once.
	run as_neighbour 1 "$PEER" "$PORT" hold 8 --from 127.0.0.1 </dev/null
	echo "$output"
	[[ "$output" == *"answers busy=0 silent=8 open=0 other=0"* ]]
	answered_normally 127.0.0.1
	local froms i cpu0 cpu1 hz
	froms=$(for i in $(seq 2 101); do printf '127.0.0.%d,' "$i"; done)
	cpu0=$(daemon_cpu)
	as_neighbour 1 "$PEER" "$PORT" flood 15 --from "127.0.0.1,${froms%,}" >"$D/flood.out" 2>&1 &
	BG+=($!)
	wait_until 30 eval '[ "$(refused unreserved_port)" -gt 300 ]'
	# Root's part from a flooded address, and the Unix socket, meanwhile.
	answered_normally 127.0.0.1
	answered_normally 127.0.0.5
	for i in $(seq 10); do
		"$CTL" --socket "$D/s.sock" status >/dev/null
		as_neighbour 2 "$CTL" --socket "$D/s.sock" status >/dev/null
	done
	run grep -c flooded "$D/flood.out"
	[ "$output" = 0 ]	# all of it during the flood
	wait_until 60 grep -q '^flooded' "$D/flood.out"
	cpu1=$(daemon_cpu) hz=$(getconf CLK_TCK)
	cat "$D/flood.out"
	echo "refused unreserved_port: $(refused unreserved_port); daemon CPU over the flood: $(((cpu1 - cpu0) * 1000 / hz)) ms"
	awk '/^flooded/ { exit !($2 > 300) }' "$D/flood.out"
	[ "$(refused busy_door_full)" = 0 ]
	[ "$(refused busy_address_full)" = 0 ]
	# Logged once a minute, not once a connection.
	[ "$(grep -c 'job-wide door: unreserved_port from' "$D/log")" -le 2 ]
	answered_normally 127.0.0.102
}

# Issue 50, finding 1: a user holds the door's port when the daemon starts.
# The daemon names that user, serves on, and listens within 5 s of the
# port coming free; what the squatter answers no sender believes
# (test_jobwide_channel).
@test "a neighbour holding the door's port at the daemon's start is named, and the door opens within 5 s of its going" {
	neighbours_up
	PEER=$(for_neighbours "$PEER_SRC")
	local squatter
	as_neighbour 1 "$PEER" "$PORT" squat >"$D/squat.out" 2>&1 &
	BG+=($!)
	wait_until 10 grep -q squatting "$D/squat.out"
	squatter=$(awk '/^squatting/ { print $2 }' "$D/squat.out")
	REPORTS="admin_comment: true" daemon_up "jobwide: {port: $PORT, listen: 127.0.0.1}
exporter: {textfile: $D/metrics.prom, period: 100ms}"
	wait_until 10 grep -q "job-wide: cannot listen on 127.0.0.1, port $PORT" "$D/log"
	grep "cannot listen" "$D/log"
	grep -q "held by uid $(neighbour_uid 1) (gos-nb1)" "$D/log"
	# It serves its jobs meanwhile.
	"$CTL" --socket "$D/s.sock" status >/dev/null
	local t0
	kill_pids "$squatter"
	wait_until 10 gone "$squatter"
	t0=$(ms)
	wait_until 15 grep -q "job-wide: the door listens on 127.0.0.1, port $PORT" "$D/log"
	echo "the door listened $(($(ms) - t0)) ms after the squatter went"
	answered_normally 127.0.0.1
}

@test "garbage is refused with its reason, counted by reason, and logged once" {
	door_up
	local i
	for i in 1 2 3 4 5; do
		run peer raw 58585858585858585858585858585858	# "XXXX..."
		echo "$output"
		[ "$output" = "refused bad_magic" ]
	done
	# "GOSJ", version 2.
	run peer raw 474f534a0201020001000000040000006e3163726564
	[ "$output" = "refused bad_version" ]
	# Job 0.
	run peer raw 474f534a0101020000000000040000006e3163726564
	[ "$output" = "refused bad_job" ]
	# A node name with a space.
	run peer raw 474f534a0101020001000000040000006e2063726564
	[ "$output" = "refused bad_node" ]
	wait_until 10 refused_is bad_magic 5
	refused_is bad_version 1 || wait_until 5 refused_is bad_version 1
	refused_is bad_job 1 || wait_until 5 refused_is bad_job 1
	refused_is bad_node 1 || wait_until 5 refused_is bad_node 1
	# At most once per reason and minute, however many.
	[ "$(grep -c 'job-wide door: bad_magic from 127.0.0.1' "$D/log")" = 1 ]
	answered_normally 127.0.0.1
}

@test "with reports.admin_comment off the daemon does not listen on the door's port" {
	door_up false
	# The loop has turned, so the daemon's start, the door's included, is done.
	"$CTL" --socket "$D/s.sock" status >/dev/null
	[ -z "$(ss -Htln "( sport = :$PORT )")" ]
	run peer frame
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *ConnectionRefusedError* ]]
	run grep -c 'job-wide: the door listens' "$D/log"
	[ "$output" = 0 ]
}
