# Sourced by the hostile suite's tests that attack a running gpuoversubd
# (daemon_up's D and PID): what the issues ask them to print and bound.
#   rss_kib               the daemon's resident memory now
#   root_registrations    50 step registrations as root on the root socket
#                         during the attack: sets P99 (ms) and PEAK (KiB)
#   memory_returns        waits until RSS is within 8 MiB of RSS0 again
#   sanitized             whether the daemon is the sanitizer build's
#   figures NAME          prints NAME's figures to the test's output

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

