# Sourced by the hostile suite's tests that attack a running gpuoversubd
# (daemon_up's D and PID): what the issues ask them to print and bound.
#   measured_dir          makes the daemon's directory D for a measured test
#   rss_kib               the daemon's resident memory now
#   root_registrations    50 step registrations as root on the root socket
#                         during the attack: sets P99 (ms) and PEAK (KiB)
#   memory_returns        waits until RSS is within 8 MiB of RSS0 again
#   sanitized             whether the daemon is the sanitizer build's
#   figures NAME          prints NAME's figures to the test's output
#   p99_within MS         whether P99 is under MS, saying the figure if not
#   peak_within KIB       whether PEAK is under KIB, saying the figure if not

# These suites bound the daemon's work per request. A registration's reply
# follows a synced save, and on ext4 an fsync waits for the journal's other
# dirty data too: beside CI's builds one took over 30 s (gos_register.c), and
# a p99 of 1 s measured that queue, not the daemon (CI failed so, once). On
# tmpfs the save runs whole, without the disk's queue; files.bats and the
# accounting suites keep their state on a disk.
measured_dir() {
	if [ -d /dev/shm ] && [ -w /dev/shm ]; then
		D=$(mktemp -d -p /dev/shm gos-measured-XXXXXX)
	else
		D=$(mktemp -d)
	fi
}

rss_kib() {
	awk '/^VmRSS/ {print $2}' "/proc/$PID/status"
}

# 50 step registrations as root on the root socket, each ended by the epilog
# call: sets P99 (ms) and PEAK (the daemon's largest RSS seen meanwhile, KiB).
root_registrations() {
	local i t0 t1 rss
	local -a ms=()
	PEAK=$(rss_kib)
	for i in $(seq 1 50); do
		t0=$(date +%s%N)
		"$REGISTER" "$D/s.root.sock" step $((1000 + i)) 0
		t1=$(date +%s%N)
		ms+=($(((t1 - t0) / 1000000)))
		"$REGISTER" "$D/s.root.sock" end $((1000 + i))
		rss=$(rss_kib)
		[ "$rss" -le "$PEAK" ] || PEAK=$rss
	done
	P99=$(printf '%s\n' "${ms[@]}" | sort -n | awk '{v[NR] = $1} END {i = int(NR * 0.99); if (i < NR * 0.99) i++; print v[i]}')
}

figures() {
	echo "# $1: root registration p99 ${P99} ms; daemon RSS ${RSS0} KiB before, ${PEAK} KiB peak during," \
		"$(rss_kib) KiB after; log $(stat -c %s "$D/log") bytes" >&3
}

p99_within() {
	[ "$P99" -lt "$1" ] || { echo "root registration p99 $P99 ms, the bound $1 ms"; return 1; }
}

peak_within() {
	[ "$PEAK" -lt "$1" ] || { echo "daemon RSS peak $PEAK KiB (before: $RSS0 KiB), the bound $1 KiB"; return 1; }
}

near() {	# RSS within 8 MiB of $1 KiB
	[ "$(rss_kib)" -le $(($1 + 8192)) ]
}

# After a flood the daemon's memory goes back to the system (the plain
# build's make check proves it). Under ASan (make check-sanitize) freed
# memory stays mapped in the sanitizer's own allocator and quarantine, so
# there only the bounds during the flood are checked.
memory_returns() {
	if sanitized; then
		return 0
	fi
	wait_until 15 near "$RSS0"
}

# Whether the daemon is the sanitizer build's.
sanitized() {
	grep -q __asan_init "${BUILD:-build}/sbin/gpuoversubd"
}

