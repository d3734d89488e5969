#!/usr/bin/env bash
# .ci/bundle-selfcheck.sh ROOT BUNDLE: the GPU bundle's self-check in a bare
# Debian root (debootstrap --variant=minbase, with proc, sys and dev
# already mounted by whoever made it), which has none of the build's
# dependencies: a library the bundle lacks fails here, as it would on a GPU
# node. Also fails if the root is not bare after all, or if any file of the
# bundle names the build tree. Leaves the root as it found it.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: .ci/bundle-selfcheck.sh ROOT BUNDLE_TARBALL"; exit 2; }
root=$(realpath "$1") bundle=$(realpath "$2")
tree=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$root/bin/bash" ] && [ -e "$root/proc/self" ] || { echo "$root: not a root with /proc mounted"; exit 1; }
for lib in libyaml-0.so.2 libhwloc.so.15; do
	if chroot "$root" /sbin/ldconfig -p | grep -q "$lib"; then
		echo "$root is not bare: it has $lib, so the self-check could not tell a missing one"; exit 1
	fi
done
inside=$(mktemp -d "$root/tmp/gpu-bundle.XXXXXX")
trap 'rm -rf "$inside"' EXIT
cp "$bundle" "$inside/bundle.tar.gz"
at=/tmp/${inside##*/}
chroot "$root" /bin/tar -C "$at" -xzf "$at/bundle.tar.gz"
if grep -rl --binary-files=text -F -e "$tree" -e "$(dirname "$bundle")" "$inside/gpuoversub-gpu"; then
	echo "the files above name the build tree ($tree)"; exit 1
fi
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$at/gpuoversub-gpu/self-check.sh"
