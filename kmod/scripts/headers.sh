#!/usr/bin/env bash
# Prints the kernel headers directory to build against: KDIR if set, else
# the newest Debian linux-headers-*-amd64. Fails, saying what to install.
if [ -n "${KDIR:-}" ]; then
	echo "$KDIR"
	exit 0
fi
dir=$(printf '%s\n' /usr/src/linux-headers-*-amd64 | grep -v '\*' | sort -V | tail -1)
[ -n "$dir" ] || { echo "no kernel headers: apt-get install linux-headers-amd64, or set KDIR" >&2; exit 1; }
echo "$dir"
