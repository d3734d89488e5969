#!/usr/bin/env bash
# Prints the Debian packages the module's QEMU tests need and this machine
# lacks (nothing when it has them all): for kmod.bats and make check.
cd "$(dirname "$0")/../../.." || exit 1
missing=()
command -v qemu-system-x86_64 >/dev/null || missing+=(qemu-system-x86)
[ -x /bin/busybox ] || missing+=(busybox-static)
kmod/scripts/headers.sh >/dev/null 2>&1 || missing+=(linux-headers-amd64)
echo "${missing[*]}"
