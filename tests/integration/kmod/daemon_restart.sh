#!/bin/busybox sh
# shellcheck shell=dash
# In the QEMU guest, with gpuoversub.ko freshly loaded: gpuoversubd in
# kernel mode, two jobs' programs (the agent on the fake CUDA driver)
# squeezing one 64 MiB GPU, then kill -9 of the daemon while they hold
# memory, a restart, and checks that nothing was lost. Prints "GOS: ok ..."
# per check and "GOS: FAIL ..." for any failure.
sock=/run/gos.sock
mkdir -p /run /etc/gos /var/lib/gos /var/log/gos /tmp
cat >/etc/gos/policy.yaml <<EOF
socket: $sock
state_dir: /var/lib/gos
reports: {dir: /var/log/gos}
engine: kernel
reserve: 0
chunk_size: 2M
balloon: {enabled: false}
order_timeout: 5s
simulated_gpus:
  - {memory: 64M, numa_node: 0, pci_bus_id: "0000:17:00.0"}
EOF
MiB=1048576
fail() { echo "GOS: FAIL daemon: $*"; }
show_log() { sed 's/^/GOS: daemon log: /' /var/log/gos/daemon.log; }
ok() { echo "GOS: ok daemon: $*"; }

start_daemon() {
	gpuoversubd -c /etc/gos/policy.yaml 2>>/var/log/gos/daemon.log &
	daemon=$!
	i=0	# the killed daemon's socket file may still be there: wait for an answer
	while ! gpuoversubctl --socket $sock status >/dev/null 2>&1 && [ $i -lt 100 ]; do
		sleep 0.2
		i=$((i + 1))
	done
	[ $i -lt 100 ] || { fail "gpuoversubd did not start"; show_log; }
}

# An application of job $2 on fds $3 (to it) and $4 (from it).
start_app() {
	mkfifo /tmp/$1.in /tmp/$1.out
	env LD_PRELOAD=/gos/libgpuoversub.so LD_LIBRARY_PATH=/gos/fakecuda FAKECUDA_MEMORY=64M \
		FAKECUDA_STATE=/tmp/fakecuda.state FAKECUDA_LOG=/tmp/$1.calls GPUOVERSUB_SOCKET=$sock GPUOVERSUB_CONTEXT_BYTES=0 \
		ASAN_OPTIONS=verify_asan_link_order=0 /gos/gos_testapp </tmp/$1.in >/tmp/$1.out 2>/tmp/$1.err &
	eval "pid_$1=$!"
	eval "exec $3>/tmp/$1.in $4</tmp/$1.out"
	read -r -t 60 ready <&"$4"
	[ "$ready" = ready ] || { fail "the test program did not start: '$ready'"; cat /tmp/$1.err; }
	gos_register $sock step "$2.0" 0 || fail "step of job $2 refused"
	gos_register $sock task "$2.0" "$(eval echo \$pid_"$1")" || fail "task of job $2 refused"
}

# ask FD_TO FD_FROM LINE: the program's one-line answer.
ask() {
	echo "$3" >&"$1"
	read -r -t 60 answer <&"$2" || answer="(no answer)"
	echo "$answer"
}

# until_where FD_TO FD_FROM NAME DEVICE HOST: placement settles within 20 s.
until_where() {
	i=0
	while [ $i -lt 100 ]; do
		[ "$(ask "$1" "$2" "where $3")" = "ok $4 $5" ] && return 0
		sleep 0.2
		i=$((i + 1))
	done
	fail "$3 is at $(ask "$1" "$2" "where $3"), not device $4 host $5"
	return 1
}

start_daemon
grep -q "the policy's order_timeout (the module's: 300 ms) does not apply" /var/log/gos/daemon.log &&
	ok "the daemon names the policy settings the module decides" || { fail "no warning for order_timeout"; show_log; }
start_app a 42 5 6
start_app b 43 7 8
[ "$(ask 5 6 'alloc x 40')" = ok ] || fail "job 42 cannot allocate"
[ "$(ask 7 8 'alloc y 40')" = ok ] || fail "job 43 cannot allocate"
# Fair shares of 32 MiB: x gives up 8 MiB through the module's orders.
until_where 5 6 x $((32 * MiB)) $((8 * MiB)) && ok "orders from the module reached the victim"
# The module knows no host topology; the agent asked the daemon for the GPU's node.
grep -q "loc=host-numa/0 " /tmp/a.calls && ok "evicted data went to the GPU's NUMA node" ||
	fail "evictions not placed on NUMA node 0: $(grep -m1 'advice=' /tmp/a.calls)"

# A forked child closes its copy of the device file; the parent's buffers stay.
[ "$(ask 5 6 fork)" = "ok 0" ] && [ "$(ask 5 6 'where x')" = "ok $((32 * MiB)) $((8 * MiB))" ] &&
	ok "a forked child leaves the parent's buffers in the module" || fail "fork changed the parent's buffers"
kill -9 $daemon
wait $daemon 2>/dev/null
[ "$(ask 5 6 'verify x')" = ok ] || fail "x changed after kill -9 of the daemon"
[ "$(ask 5 6 'alloc z 4')" = ok ] || fail "no allocation without the daemon"
start_daemon
grep -q "job 42 keeps tenant" /var/log/gos/daemon.log && grep -q "job 43 keeps tenant" /var/log/gos/daemon.log &&
	ok "the restarted daemon kept both jobs' tenants" || { fail "tenants not adopted"; show_log; }
# The agent reconnects for the job's view: managed, x and z's 44 MiB
# between device and host, of 64 MiB.
set -- $(ask 5 6 stats)	# ok MANAGED DEVICE HOST ALLOWED EVICTIONS RETURNS BYTES...
[ "$1 $2 $(($3 + $4)) $5" = "ok 1 $((44 * MiB)) $((64 * MiB))" ] &&
	ok "the job's view after the restart: $* " || fail "stats after the restart: '$*'"
[ "$(ask 7 8 'free y')" = ok ] || fail "free y"
# y's memory is gone: x and z come back to the device.
until_where 5 6 x $((40 * MiB)) 0 && ok "returns after the restart"
until_where 5 6 z $((4 * MiB)) 0
[ "$(ask 5 6 'verify x')" = ok ] && [ "$(ask 5 6 'verify z')" = ok ] && ok "data intact" || fail "data lost"
set -- $(ask 5 6 stats)	# settled: what the agent moved, before and after the restart
evicted=$8
gos_register $sock end 42.0 && gos_register $sock end 43.0 || fail "steps could not end"
# The bytes the agent evicted, before and after the restart, counted once.
[ "${evicted:-0}" -gt 0 ] && grep -q "^  \"bytes_evicted\": $evicted,\$" /var/log/gos/job-42.json &&
	ok "job 42's report counts its $evicted evicted bytes once" ||
	{ fail "job 42's report; the agent evicted $evicted bytes"; sed 's/^/GOS: report: /' /var/log/gos/job-42.json; }
kill -9 "$pid_a" "$pid_b"
kill $daemon
wait 2>/dev/null
if dmesg | grep -qE 'BUG:|WARNING:|Oops'; then fail "the kernel complained"; fi
echo "GOS: daemon restart test finished"
