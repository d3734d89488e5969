#!/usr/bin/env bash
# fetch.sh OUT ABI: what the module's tests and checks need from Debian,
# fetched once into OUT: the kernel image OUT/boot/vmlinuz-ABI, and from
# the kernel source package kselftest_harness.h (OUT/kselftest) and
# checkpatch.pl with its data files (OUT/checkpatch).
set -euo pipefail
out=$1 abi=$2
mkdir -p "$out"
download() {	# package: its .deb in OUT, printed
	(cd "$out" && apt-get download "$1" >/dev/null 2>&1) || { echo "cannot download $1 (apt-get update?)" >&2; return 1; }
	printf '%s\n' "$out/$1"_*.deb
}
if [ ! -f "$out/boot/vmlinuz-$abi" ]; then
	# Debian 12 and 13 have the image in linux-image-ABI as
	# /boot/vmlinuz-ABI. From Linux 7 (testing) linux-image-ABI is a
	# metapackage, and the image is linux-binary-ABI's
	# /usr/lib/modules/ABI/vmlinuz.
	found=
	for pkg in "linux-image-$abi" "linux-binary-$abi"; do
		echo "== fetching $pkg"
		deb=$(download "$pkg") || break
		path=$(dpkg-deb -c "$deb" | awk '{print $NF}' |
			grep -Fx -e "./boot/vmlinuz-$abi" -e "./usr/lib/modules/$abi/vmlinuz" | head -1 || true)
		if [ -n "$path" ]; then
			dpkg-deb --fsys-tarfile "$deb" | tar -xO "$path" >"$out/vmlinuz.part"
			mkdir -p "$out/boot" && mv "$out/vmlinuz.part" "$out/boot/vmlinuz-$abi"
			found=$pkg
		fi
		rm -f "$deb"
		[ -z "$found" ] || break
	done
	[ -n "$found" ] || { echo "no kernel image for $abi in linux-image-$abi or linux-binary-$abi" >&2; exit 1; }
fi
if [ ! -f "$out/kselftest/kselftest_harness.h" ] || [ ! -f "$out/checkpatch/checkpatch.pl" ]; then
	ver=$(echo "$abi" | cut -d. -f1-2)
	src=linux-source-$ver
	echo "== fetching kselftest_harness.h and checkpatch.pl from $src"
	deb=$(download "$src")
	tarball=./usr/src/$src.tar.xz
	dpkg-deb -c "$deb" | awk '{print $NF}' | grep -Fxq "$tarball" ||
		{ echo "$src has no $tarball" >&2; exit 1; }
	rm -rf "${out:?}/src" && mkdir -p "$out/src"
	# One pass over the tarball (the longest step): the files, then each
	# to its place.
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "$tarball" | tar -xJ -C "$out/src" \
		"$src/tools/testing/selftests/kselftest_harness.h" "$src/tools/testing/selftests/kselftest.h" \
		"$src/scripts/checkpatch.pl" "$src/scripts/spelling.txt" "$src/scripts/const_structs.checkpatch"
	rm -f "$deb"
	rm -rf "$out/kselftest" "$out/checkpatch"
	mv "$out/src/$src/tools/testing/selftests" "$out/kselftest"
	mv "$out/src/$src/scripts" "$out/checkpatch"
	rm -rf "${out:?}/src"
fi
