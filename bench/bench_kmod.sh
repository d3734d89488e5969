#!/usr/bin/env bash
# The allocation ioctl's cost in kernel mode, as a ratio to a no-op ioctl in
# the same run: tests/integration/kmod/run.sh --bench boots gpuoversub.ko in
# its QEMU guest (TCG) with kmod_bench.c, which times GOS_IOC_ALLOC (2 MiB,
# freed each round) against GOS_IOC_VERSION, 20000 rounds. Without QEMU,
# busybox-static or kernel headers it skips, saying so.
set -euo pipefail
results=${1:+$(realpath -m "$1")}
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
missing=$(tests/integration/kmod/missing.sh)
if [ -n "$missing" ]; then
	echo "gpuoversub: kernel-mode ioctl benchmark skipped: needs $missing"
	exit 0
fi
out=$BUILD/kmod-bench.out
BUILD=$BUILD tests/integration/kmod/run.sh --bench >"$out" 2>&1 || { cat "$out"; exit 1; }
figures() {	# figures NAME: the figures of the guest's "GOS: bench NAME ..." line
	tr -d '\r' <"$out" | awk -v name="$1" '$1 == "GOS:" && $2 == "bench" && $3 == name {$1 = $2 = $3 = ""; sub(/^ +/, ""); print}'
}
us() { awk -v ns="$1" 'BEGIN {printf "%.2f", ns / 1000}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
kernel=$(tr -d '\r' <"$out" | awk '$1 == "GOS:" && $2 == "booted" {print $3}')
read -r v50 v99 < <(figures version)
read -r a50 a99 < <(figures alloc)
read -r f50 f99 < <(figures free)
text="## Kernel-mode allocation ioctl, $(date +%F)

gpuoversub.ko in a QEMU guest (TCG, Linux $kernel; host $(nproc) x $cpu), \`make bench\`
(\`bench/bench_kmod.sh\`, \`tests/integration/kmod/kmod_bench.c\`): $(figures rounds) rounds, each one
GOS_IOC_VERSION, one 2 MiB GOS_IOC_ALLOC with room on the GPU and its GOS_IOC_FREE. TCG emulates the
CPU, so the microseconds are the emulator's; the ratio to the no-op ioctl is the figure.

| Ioctl | Median | p99 | Median / no-op |
|---|---|---|---|
| GOS_IOC_VERSION (no-op baseline) | $(us "$v50") us | $(us "$v99") us | 1.00 |
| GOS_IOC_ALLOC, 2 MiB | $(us "$a50") us | $(us "$a99") us | $(ratio "$a50" "$v50") (paired rounds: $(figures ratio)) |
| GOS_IOC_FREE | $(us "$f50") us | $(us "$f99") us | $(ratio "$f50" "$v50") |"
echo "$text"
[ -z "$results" ] || python3 bench/results_section.py "$results" bench_kmod "$text"
