#!/usr/bin/env bash
# Builds gpuoversub.ko against Debian's kernel headers, boots the matching
# Debian kernel in QEMU (2 CPUs; KVM where it works, else TCG) with a
# busybox initramfs holding the module and the static kselftest program
# kmod_test.c (beside this script), and fails on any "not ok", FAIL line,
# kernel complaint or hang. The daemon,
# the agent, the fake CUDA driver and the test program go in too, with the
# shared libraries they load, for daemon_restart.sh, with gos_register
# playing the SPANK plugin.
# Fetches (once, cached in $BUILD/kmod-vm) the kernel image and, from the
# kernel source package, kselftest_harness.h (kmod/scripts/fetch.sh).
# With --bench the same boot runs only the static kmod_bench.c (the
# allocation ioctl against a no-op one, for bench/bench_kmod.sh), with its
# own initramfs and console log (console-bench.log), and prints its lines.
set -euo pipefail
cd "$(dirname "$0")/../../.."
BUILD=${BUILD:-build}
case ${1:-} in
--bench) tag=-bench ;;
"") tag= ;;
*) echo "usage: $0 [--bench]" >&2; exit 2 ;;
esac
out=$(realpath -m "$BUILD/kmod-vm")
headers=$(kmod/scripts/headers.sh)
here=tests/integration/kmod
abi=${headers#/usr/src/linux-headers-}
mkdir -p "$out"

kmod/scripts/fetch.sh "$out" "$abi"
image=$out/boot/vmlinuz-$abi

# KVM where it works (tests/tools/qemu_accel.bash); its probe boots while
# the rest is built.
source tests/tools/qemu_accel.bash
accel_probe "$out" "$image"

echo "== building gpuoversub.ko against $headers"
kmod/scripts/build-module.sh "$BUILD" "$headers" >"$out/build.log" 2>&1 || { cat "$out/build.log"; exit 1; }

echo "== packing the initramfs"
root=$out/initramfs$tag
rm -rf "$root" && mkdir -p "$root/bin" "$root/proc" "$root/sys" "$root/dev"
cp /bin/busybox "$root/bin/busybox"
cp "$out/module/kmod/gpuoversub.ko" "$root/"
install -m 0755 $here/init.sh "$root/init"
if [ -n "$tag" ]; then
	gcc -static -O2 -Wall -Wextra -Werror -Iinclude $here/kmod_bench.c -o "$root/kmod_bench"
else
	gcc -static -O2 -Wall -Wextra -Werror -Wno-unused-parameter -Iinclude -I"$out/kselftest" $here/kmod_test.c -o "$root/kmod_test"
	gcc -static -O2 -Wall -Wextra -Werror -Iinclude $here/kmod_cycle.c -o "$root/kmod_cycle"
	install -m 0755 $here/daemon_restart.sh "$root/daemon_restart.sh"
	mkdir -p "$root/gos/fakecuda" "$root/sbin"
	for f in sbin/gpuoversubd bin/gpuoversubctl lib/libgpuoversub.so tests/tools/gos_register tests/tools/gos_testapp \
		tests/fakecuda/libcuda.so.1; do
		[ -e "$BUILD/$f" ] || { echo "$BUILD/$f is missing: run make first"; exit 1; }
	done
	cp "$BUILD/sbin/gpuoversubd" "$root/sbin/"
	cp "$BUILD/bin/gpuoversubctl" "$BUILD/tests/tools/gos_register" "$root/bin/"
	cp "$BUILD/lib/libgpuoversub.so" "$BUILD/tests/tools/gos_testapp" "$root/gos/"
	cp "$BUILD/tests/fakecuda/libcuda.so.1" "$root/gos/fakecuda/"
	# Each shared library at the path the dynamic loader looks for it.
	source tests/tools/guest_libraries.bash
	copy_libraries "$root" "$BUILD/sbin/gpuoversubd" "$BUILD/bin/gpuoversubctl" "$BUILD/lib/libgpuoversub.so" \
		"$BUILD/tests/tools/gos_testapp" "$BUILD/tests/fakecuda/libcuda.so.1"
fi
(cd "$root" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$out/initramfs$tag.cpio.gz"

accel_decide
args=("${accel_args[@]}") why=$accel_why
echo "== booting $abi in QEMU (${accel^^}${why:+, $why}; 2 CPUs)"
log=$out/console$tag.log
# init.sh runs only the benchmark when the command line says gos.bench.
timeout 300 qemu-system-x86_64 "${args[@]}" -m 1024 -smp 2 -nographic -no-reboot -nodefaults -serial stdio \
	-kernel "$image" -initrd "$out/initramfs$tag.cpio.gz" \
	-append "console=ttyS0 panic=-1 oops=panic quiet${tag:+ gos.bench}" </dev/null >"$log" 2>&1 || true
tr -d '\r' <"$log" | grep -E '^(ok|not ok|#|GOS:)' || true
fail=0
grep -q '^GOS: done' "$log" || { echo "FAIL: the guest did not finish (hang or panic); see $log"; fail=1; }
if [ -n "$tag" ]; then
	grep -q '^GOS: bench ratio' "$log" && ! grep -q '^GOS: FAIL' "$log" || fail=1
	exit "$fail"
fi
grep -q '^not ok' "$log" && fail=1
grep -q '^GOS: FAIL' "$log" && fail=1
grep -q '^GOS: daemon restart test finished' "$log" || fail=1
grep -q '^# PASSED: [0-9]* / [0-9]* tests passed' "$log" || fail=1
[ "$fail" -eq 0 ] && echo "kernel module tests: all passed" || echo "kernel module tests: FAILED"
exit "$fail"
