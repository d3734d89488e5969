# Sourced by the daemon's bats tests: a real gpuoversubd with one simulated
# 2 GiB GPU (SIMULATED=none: the GPUs the driver has), in a directory of its own.
#   daemon_up [POLICY_LINES]  starts it in D, a new directory unless set, with
#                             chunk_size CHUNK (2M unless set) and REPORTS,
#                             more keys of its reports: map (e.g.
#                             "admin_comment: true"), when set;
#                             policy D/p.yaml, socket D/s.sock, log D/log; sets PID
#   daemon_down               stops it and removes D

daemon_up() {
	D=${D:-$(mktemp -d)}
	chmod 755 "$D"
	cat >"$D/p.yaml" <<EOP
socket: $D/s.sock
state_dir: $D/state
reports: {dir: $D/reports${REPORTS:+, $REPORTS}}
chunk_size: ${CHUNK:-2M}
$([ "${SIMULATED:-}" = none ] || printf '%s\n  %s' simulated_gpus: '- {memory: 2G, numa_node: 1, pci_bus_id: "0000:b1:00.0"}')
${1:-}
EOP
	"${BUILD:-build}/sbin/gpuoversubd" -c "$D/p.yaml" 2>"$D/log" &
	PID=$!
	wait_until 30 gpuoversubd_listens "$D/s.sock" || { cat "$D/log"; return 1; }
}

daemon_down() {
	kill "$PID" 2>/dev/null || true
	wait "$PID" 2>/dev/null || true
	rm -rf "$D"
}
