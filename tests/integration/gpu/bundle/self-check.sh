#!/usr/bin/env bash
# The GPU bundle's check without a GPU (`./self-check.sh`, or `run.sh
# --self-check`), on the node or anywhere: needs bash, coreutils and ldd
# only, and root (it registers jobs as the SPANK plugin would).
#   1. every file is as built (SHA256SUMS), and this glibc is recent enough;
#   2. every binary loads: ldd finds each library it needs (the driver's
#      libcuda.so.1 from the bundle's fake), and the daemon and ctl answer;
#   3. gpuoversubd starts on a simulated 1 GiB GPU, and a program under the
#      agent allocates, is evicted by a second job's pressure and gets its
#      data back intact, through the test-only fake driver the bundle
#      carries (never installed; never used by run.sh on a GPU).
# Prints PASS or FAIL per step; exits 0 only if every step passed.
set -uo pipefail
cd "$(dirname "$0")" || exit 1
source tests/integration/wait.bash
source bench/relief.bash	# start and ask: a program driven over FIFOs
failures=0
check() {	# check NAME OK(0/1) DETAIL
	if [ "$2" -eq 0 ]; then echo "PASS $1"; else echo "FAIL $1: $3"; failures=$((failures + 1)); fi
}
[ "$(id -u)" -eq 0 ] || { echo "self-check.sh must run as root: it registers jobs as the SPANK plugin does"; exit 1; }

out=$(sha256sum --quiet -c SHA256SUMS 2>&1); check "files intact" $? "$out"
need=$(sed -n 's/^glibc\t//p' MANIFEST)
have=$(ldd --version 2>&1 | sed -n '1s/.* \([0-9][0-9.]*\)$/\1/p')
[ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -1)" = "$need" ]
check "glibc $have >= $need" $? "the bundle's binaries need glibc $need; this system has ${have:-none found}"

# Each library resolves in the bundle, or is glibc's or the driver's: one
# found elsewhere on this machine might be missing on a node.
fake=$PWD/build/tests/fakecuda system=$(sed -n 's/^system\t//p' MANIFEST)
missing=
for elf in build/bundle/bin/* build/bundle/lib/* build/lib/*.so build/tests/tools/* build/tests/fakecuda/* \
	build/tests/integration/gpu/*; do
	[ "$(head -c 4 "$elf" | tr -d '\177')" = ELF ] || continue
	[ "${elf##*/}" = gos_register ] && continue	# static
	while read -r soname arrow path _; do
		[ "$arrow" = "=>" ] || continue
		[ "$path" != not ] || path="not found"
		[[ $soname =~ $system || $path == "$PWD"/build/* ]] || missing+="$elf: $soname => $path; "
	done < <(LD_LIBRARY_PATH=$PWD/build/bundle/lib:$fake ldd "$elf" 2>&1)
done
check "every binary finds its libraries" "$([ -z "$missing" ]; echo $?)" "$missing"
for prog in build/sbin/gpuoversubd build/bin/gpuoversubctl; do
	out=$("$prog" --help 2>&1); check "$prog --help" $? "$out"
done
out=$(build/tests/tools/gos_register 2>&1); [[ $out == *usage* ]]; check "gos_register loads" $? "$out"

work=$(mktemp -d)
daemon=
cleanup() {
	[ -z "$daemon" ] || { kill "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null; }
	rm -rf "$work"
}
trap cleanup EXIT
printf 'socket: %s\nstate_dir: %s\nreports: {dir: %s}\nreserve: 0\nchunk_size: 2M\nsimulated_gpus:\n  - {memory: 1G, numa_node: 0, pci_bus_id: "0000:17:00.0"}\n' \
	"$work/sock" "$work/state" "$work/reports" >"$work/policy.yaml"
build/sbin/gpuoversubd -c "$work/policy.yaml" 2>"$work/daemon.log" &
daemon=$!
wait_until 10 test -S "$work/sock"
check "gpuoversubd starts on a simulated GPU" $? "$(cat "$work/daemon.log")"
[ "$failures" -eq 0 ] || exit 1

export LD_LIBRARY_PATH=$fake FAKECUDA_MEMORY=1G FAKECUDA_STATE=$work/fake.state
agent=$PWD/build/lib/libgpuoversub.so reg=build/tests/tools/gos_register
app() {	# app JOB: gos_testapp as a task of JOB, under the agent
	env LD_PRELOAD="$agent" GPUOVERSUB_SOCKET="$work/sock" GPUOVERSUB_REQUIRED=1 \
		"$reg" "$work/sock" exec "$1" build/tests/tools/gos_testapp
}
holder() { app 1; }
presser() { app 2; }
"$reg" "$work/sock" step 1 0 && "$reg" "$work/sock" step 2 0
check "jobs registered" $? "gos_register step failed"
LOG=$work/apps.err answer_s=30
start held holder
replies=
for b in 1 2 3; do replies+="$(ask "$held_in" "$held_out" "alloc b$b 256") "; done
[ "$replies" = "ok ok ok " ]; check "job 1 allocates 768 MiB under the agent" $? "$replies $(cat "$LOG")"
start pressing presser
reply=$(ask "$pressing_in" "$pressing_out" "press p 512 20000")
[[ $reply == "ok "* ]]; check "job 2 presses 512 MiB and is relieved" $? "$reply $(cat "$LOG")"
evicted() {
	local r
	r=$(build/bin/gpuoversubctl --socket "$work/sock" --json report 1 | grep -o '"bytes_evicted": *[0-9]*')
	[ "${r##*[ :]}" -gt 0 ] 2>/dev/null
}
wait_until 10 evicted
check "job 1 is evicted through the fake driver" $? "$(build/bin/gpuoversubctl --socket "$work/sock" report 1)"
ask "$pressing_in" "$pressing_out" quit >/dev/null
replies=
for b in 1 2 3; do replies+="$(ask "$held_in" "$held_out" "verify b$b") "; done
[ "$replies" = "ok ok ok " ]; check "job 1's data intact after eviction and return" $? "$replies $(cat "$LOG")"
ask "$held_in" "$held_out" quit >/dev/null
exec {held_in}>&- {held_out}<&- {pressing_in}>&- {pressing_out}<&-
wait "$held_pid" "$pressing_pid"
echo "== self-check: $failures failure(s)"
[ "$failures" -eq 0 ]
