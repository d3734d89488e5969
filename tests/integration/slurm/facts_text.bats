#!/usr/bin/env bats
# gpuoversub-slurm-facts says why a fact is missing in words a site admin
# reads: a slurmdbd that cannot be reached is named with its error (the
# site without accounting is in slurm.bats, which has a slurmctld).

setup() {
	dir=$(mktemp -d /tmp/gos-facts-XXXXXX)
	# Nothing listens on ports 1 and 2: slurmctld and slurmdbd both down.
	cat >"$dir/slurm.conf" <<CONF
ClusterName=facts
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=1
MessageTimeout=2
AuthType=auth/munge
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=2
NodeName=node1 NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN
PartitionName=debug Nodes=node1 Default=YES
CONF
}

teardown() {
	rm -rf "$dir"
}

@test "a slurmdbd that cannot be reached is named with its error" {
	run env SLURM_CONF="$dir/slurm.conf" "${BUILD:-build}/libexec/gpuoversub/gpuoversub-slurm-facts"
	[ "$status" -eq 0 ]
	[[ $output == *"unavailable qos slurmdbd cannot be reached: Connection refused"* ]]
	[[ $output == *"unavailable partitions slurmctld: "* ]]
	[[ $output != *"No error"* ]]
}

@test "--node-addrs names slurmctld's error when it cannot be reached" {
	run env SLURM_CONF="$dir/slurm.conf" "${BUILD:-build}/libexec/gpuoversub/gpuoversub-slurm-facts" --node-addrs
	[ "$status" -eq 0 ]
	[[ $output == "unavailable nodes slurmctld: "* ]]
}

# The record helper serves its user and root only, whoever the request
# claims to be, and a request that is not one is refused before libslurm.
# What nobody runs is copied where nobody can reach it: the tree may lie
# under a directory only root may enter (CI's roots build in /root).
record() { head -n 1 tests/unit/report/golden/admin-comment-v3.txt | sed 's/^.*gpuoversub=/gpuoversub=/'; }
request() { "${BUILD:-build}/tests/tools/gos_record_request" --spawn "${BUILD:-build}/libexec/gpuoversub/gpuoversub-slurm-facts" "$@"; }
as_nobody() {
	install -m 0755 "${BUILD:-build}/libexec/gpuoversub/gpuoversub-slurm-facts" "${BUILD:-build}/tests/tools/gos_record_request" "$dir/"
	chmod 0755 "$dir"
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$dir/gos_record_request" --spawn "$dir/gpuoversub-slurm-facts" "$@"
}

@test "--serve-record refuses a peer that is neither its user nor root" {
	run as_nobody daemon 1 2 <<<"gpuoversub={}"
	echo "$output"
	[ "$status" -eq 4 ]
	[ "${lines[-1]}" = "refused uid 65534 is not daemon" ]
}

@test "--serve-record serves its user and root, and refuses what is not a request" {
	# As nobody, serving nobody: the request passes to --write-record, which
	# cannot reach slurmdbd here.
	export SLURM_CONF=$dir/slurm.conf
	run as_nobody nobody 7 1733140000 <<<"$(record)"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ ${lines[-1]} == "failed "* ]]
	run request nobody 7 1733140000 <<<"$(record)"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ ${lines[-1]} == "failed "* ]]
	run request nobody 0 1 <<<"$(record)"
	echo "$output"
	[ "$status" -eq 4 ]
	[ "$output" = "refused the request's first line is not 'JOB START', two positive numbers" ]
	run request no-such-user-here 7 1 <<<"gpuoversub={}"
	[ "$status" -eq 4 ]
	[[ $output == "refused no user no-such-user-here here" ]]
	run "${BUILD:-build}/libexec/gpuoversub/gpuoversub-slurm-facts" --serve-record nobody </dev/null
	[ "$status" -eq 2 ]
	[[ $output == *"stdin is no Unix socket"* ]]
}

# Issue 50, finding 9: a peer that connects and sends nothing holds the root
# helper 5 s, not the 60 it has for slurmdbd. (systemd caps the helpers at
# MaxConnections=8 beside it: tests/service.)
@test "--serve-record gives an idle peer 5 s, then goes" {
	run python3 - "${BUILD:-build}/libexec/gpuoversub/gpuoversub-slurm-facts" <<'PY'
import socket, subprocess, sys, time
mine, its = socket.socketpair()
t0 = time.monotonic()
p = subprocess.Popen([sys.argv[1], "--serve-record", "nobody"], stdin=its, stdout=its)
its.close()
rc = p.wait(timeout=30)
print("gone after %.1f s, status %d" % (time.monotonic() - t0, rc))
print(mine.recv(256).decode().strip())
PY
	echo "$output"
	[ "$status" -eq 0 ]
	# Its alarm, after 5 s and well before 60: a refusal, status 4.
	awk 'NR == 1 { exit !($3 >= 4.5 && $3 <= 15 && $6 == 4) }' <<<"$output"
	[ "${lines[1]}" = "refused no whole request within 5 s" ]
}
