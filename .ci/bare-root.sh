#!/usr/bin/env bash
# A bare Debian 12 root (debootstrap --variant=minbase bookworm) for CI's
# steps that must start from nothing: the README's path, the GPU bundle's
# self-check. One per CI run, shared by those steps.
#
#   root=$(.ci/bare-root.sh up SRC [TARBALL])
#       Debootstraps bookworm from deb.debian.org into a new directory under
#       /var/tmp (or unpacks TARBALL, a tar of such a root, for experiments),
#       prepares it and prints its path, the only line on stdout (progress
#       goes to stderr). Prepared: /etc/hosts, /etc/resolv.conf, a
#       policy-rc.d that keeps apt from starting daemons; /proc mounted;
#       /sys and /dev bound recursively (so /sys/fs/cgroup is there);
#       /usr/local/cuda bound read-only; SRC bound at /src. The root shares
#       the machine's network (its non-loopback addresses keep Slurm's
#       getaddrinfo and Open MPI working). On failure it tears down what
#       it made.
#   .ci/in-root.sh ROOT CMD [ARG...]
#       Runs CMD as root inside ROOT, in /src, with a clean environment
#       (PATH, HOME=/root, LANG=C.UTF-8); its exit status is CMD's.
#   .ci/bare-root.sh down ROOT
#       Kills the processes still running in ROOT (by pid: those whose root
#       is ROOT), unmounts by path everything `up` mounted, and removes
#       ROOT, never crossing into a mount (SRC stays as it was). Safe to
#       call twice and on a half-made root; run it from an EXIT trap.
set -euo pipefail

mounts=(src usr/local/cuda dev sys proc)	# what `up` mounts, in unmount order

down() {
	local root=$1 pid
	[ -d "$root" ] || return 0
	for pid in $(ls /proc | grep -E '^[0-9]+$'); do
		[ "$(readlink "/proc/$pid/root" 2>/dev/null)" = "$root" ] && { kill -9 "$pid" 2>/dev/null || true; }
	done
	local m
	for m in "${mounts[@]}"; do
		# A process just killed may hold it a moment: a few tries.
		for _ in 1 2 3 4 5; do
			mountpoint -q "$root/$m" || break
			umount -R "$root/$m" 2>/dev/null || sleep 1
		done
	done
	if findmnt -rn -o TARGET | grep -q "^$root/"; then
		echo "bare-root: still mounted under $root, left in place:" >&2
		findmnt -rn -o TARGET | grep "^$root/" >&2
		return 1
	fi
	rm -rf --one-file-system "$root"
}

up() {
	local src=$1 tarball=${2:-} root
	[ -d "$src" ] || { echo "bare-root: no source directory $src" >&2; return 1; }
	[ -f /usr/local/cuda/include/cuda.h ] || { echo "bare-root: no CUDA headers in /usr/local/cuda" >&2; return 1; }
	root=$(mktemp -d /var/tmp/gos-bare-root-XXXXXX)
	chmod 755 "$root"
	trap 'down "$root"' ERR
	if [ -n "$tarball" ]; then
		tar -C "$root" -xf "$tarball"
	else
		command -v debootstrap >/dev/null || { echo "bare-root: no debootstrap (packaging/deps.sh ci)" >&2; return 1; }
		debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >"$root.log" 2>&1 ||
			{ tail -20 "$root.log" >&2; false; }
		rm -f "$root.log"
	fi
	# What a minbase root lacks that a real machine has.
	printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n::1\tlocalhost ip6-localhost ip6-loopback\n' \
		"$(hostname)" >"$root/etc/hosts"
	cp -L /etc/resolv.conf "$root/etc/resolv.conf"
	# Installing munge, slurmd or mariadb would start them in the root.
	printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
	chmod 755 "$root/usr/sbin/policy-rc.d"
	mount -t proc proc "$root/proc"
	mount --rbind /sys "$root/sys" && mount --make-rslave "$root/sys"
	mount --rbind /dev "$root/dev" && mount --make-rslave "$root/dev"
	mkdir -p "$root/usr/local/cuda" "$root/src"
	mount --bind /usr/local/cuda "$root/usr/local/cuda"
	mount -o remount,bind,ro "$root/usr/local/cuda"
	mount --bind "$src" "$root/src"
	trap - ERR
	echo "$root"
}

case ${1:-} in
up) [ $# -ge 2 ] || { echo "usage: $0 up SRC [TARBALL]" >&2; exit 2; }; up "$2" "${3:-}" ;;
down) [ $# -eq 2 ] || { echo "usage: $0 down ROOT" >&2; exit 2; }; down "$2" ;;
*) echo "usage: $0 up SRC [TARBALL] | down ROOT" >&2; exit 2 ;;
esac
