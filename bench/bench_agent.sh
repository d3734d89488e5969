#!/usr/bin/env bash
# The agent's own cost per allocation, without a GPU: allocate+free pairs
# of 8 MiB through the test-only fake driver, with and without the agent
# (linked to a private gpuoversubd), in one run. On a GPU the driver's
# managed allocation adds to this; `make bench-gpu` measures that.
# Needs root (it registers the job as the SPANK plugin would).
set -euo pipefail
BUILD=${BUILD:-build}
results=${1:-}
work=$(mktemp -d)
trap 'kill $daemon 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
printf 'socket: %s\nstate_dir: %s\nreports: {dir: %s}\nreserve: 0\nsimulated_gpus:\n  - {memory: 64G, numa_node: 0, pci_bus_id: "0000:17:00.0"}\n' \
	"$work/sock" "$work/state" "$work/reports" >"$work/policy.yaml"
"$BUILD/sbin/gpuoversubd" -c "$work/policy.yaml" 2>"$work/daemon.log" &
daemon=$!
for _ in $(seq 100); do [ -S "$work/sock" ] && break; sleep 0.1; done
"$BUILD/tests/gpu/gos_register" "$work/sock" step 1 0
export LD_LIBRARY_PATH=$BUILD/tests/fakecuda FAKECUDA_MEMORY=64G
run() { printf 'bench 2000 8\nquit\n' | "$@" "$BUILD/tests/agent/gos_testapp" | awk '/^ok [0-9]/ {print $2}'; }
plain=$(run env)
agent=$(run env LD_PRELOAD="$(realpath "$BUILD/lib/libgpuoversub.so")" GPUOVERSUB_SOCKET="$work/sock" \
	GPUOVERSUB_REQUIRED=1 bash -c '"$0" "$1" task 1 $$ && exec "${@:2}"' "$BUILD/tests/gpu/gos_register" "$work/sock")
added=$(( (agent - plain) / 1000 ))
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
text="Agent cost per 8 MiB allocate+free pair, fake driver, $(nproc) x $cpu, $(date +%F):
median $((agent / 1000)) us with the agent vs $((plain / 1000)) us without (added ${added} us: one
round trip to gpuoversubd through the agent's reader thread, plus advise and prefetch calls; the free
is not waited for). Design target for the GPU figure: <= 20 us added."
echo "$text"
if [ -n "$results" ]; then
	python3 - "$results" "$text" <<'PY'
import re, sys
path, text = sys.argv[1], sys.argv[2]
section = "<!-- bench_agent:begin -->\n" + text + "\n<!-- bench_agent:end -->"
body = open(path).read()
if "<!-- bench_agent:begin -->" in body:
    body = re.sub(r"<!-- bench_agent:begin -->.*<!-- bench_agent:end -->", lambda _: section, body, flags=re.S)
else:
    body = body.replace("\n## On a GPU", "\n" + section + "\n\n## On a GPU", 1)
open(path, "w").write(body)
PY
fi
