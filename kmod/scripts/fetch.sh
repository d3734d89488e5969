#!/usr/bin/env bash
# fetch.sh OUT ABI: what the module's tests and checks need from Debian,
# fetched once into OUT: the kernel image OUT/boot/vmlinuz-ABI, and from
# the kernel source package kselftest_harness.h (OUT/kselftest) and
# checkpatch.pl with its data files (OUT/checkpatch).
set -euo pipefail
out=$1 abi=$2
mkdir -p "$out"
fetch() {	# package, then the paths to extract from it
	local pkg=$1; shift
	(cd "$out" && apt-get download "$pkg" >/dev/null 2>&1) || { echo "cannot download $pkg (apt-get update?)" >&2; exit 1; }
	dpkg-deb --fsys-tarfile "$out/$pkg"_*.deb | tar -x -C "$out" "$@"
	rm -f "$out/$pkg"_*.deb
}
if [ ! -f "$out/boot/vmlinuz-$abi" ]; then
	echo "== fetching linux-image-$abi"
	fetch "linux-image-$abi" "./boot/vmlinuz-$abi"
fi
if [ ! -f "$out/kselftest/kselftest_harness.h" ] || [ ! -f "$out/checkpatch/checkpatch.pl" ]; then
	ver=$(echo "$abi" | cut -d. -f1-2)
	echo "== fetching kselftest_harness.h and checkpatch.pl from linux-source-$ver"
	fetch "linux-source-$ver" "./usr/src/linux-source-$ver.tar.xz"
	mkdir -p "$out/kselftest" "$out/checkpatch"
	tar -xJf "$out/usr/src/linux-source-$ver.tar.xz" -C "$out/kselftest" --strip-components=4 \
		"linux-source-$ver/tools/testing/selftests/kselftest_harness.h" \
		"linux-source-$ver/tools/testing/selftests/kselftest.h"
	tar -xJf "$out/usr/src/linux-source-$ver.tar.xz" -C "$out/checkpatch" --strip-components=2 \
		"linux-source-$ver/scripts/checkpatch.pl" "linux-source-$ver/scripts/spelling.txt" \
		"linux-source-$ver/scripts/const_structs.checkpatch"
	rm -rf "${out:?}/usr"
fi
