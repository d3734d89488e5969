# Sourced by the benchmarks: private_daemon MEMORY [POLICY_LINES] starts a
# gpuoversubd with one simulated GPU of MEMORY (and POLICY_LINES appended to
# its policy) in a temporary directory ($work, socket $work/sock), registers
# job 1 on it, and stops and removes it all on exit.
source "$(dirname "${BASH_SOURCE[0]}")/../tests/integration/wait.bash"
private_daemon() {
	work=$(mktemp -d)
	trap 'kill $daemon 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
	printf 'socket: %s\nstate_dir: %s\nreports: {dir: %s}\nreserve: 0\nchunk_size: 2M\nsimulated_gpus:\n  - {memory: %s, numa_node: 0, pci_bus_id: "0000:17:00.0"}\n' \
		"$work/sock" "$work/state" "$work/reports" "$1" >"$work/policy.yaml"
	[ -z "${2:-}" ] || echo "$2" >>"$work/policy.yaml"
	"$BUILD/sbin/gpuoversubd" -c "$work/policy.yaml" 2>"$work/daemon.log" &
	daemon=$!
	wait_until 10 test -S "$work/sock" || { cat "$work/daemon.log"; exit 1; }
	"$BUILD/tests/tools/gos_register" "$work/sock" step 1 0
}
