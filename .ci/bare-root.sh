#!/usr/bin/env bash
# A bare Debian root (debootstrap --variant=minbase) for CI's steps that
# must start from nothing: the README's path, the GPU bundle's self-check,
# and the other releases' builds and suites. One per release per CI run.
#
#   root=$(.ci/bare-root.sh up SRC [RELEASE])
#       Debootstraps RELEASE (bookworm, the default; trixie; forky, Debian
#       testing) from deb.debian.org into a new directory under /var/tmp
#       (GOS_ROOT_TARBALL: unpacks that tar of such a root instead, for
#       experiments), prepares it and prints its path, the only line on
#       stdout (progress goes to stderr). Prepared: /etc/hosts,
#       /etc/resolv.conf, a policy-rc.d that keeps apt from starting
#       daemons, on forky an apt setting that accepts the registry's expired
#       snapshot; /proc mounted; /sys and /dev bound recursively (so
#       /sys/fs/cgroup is there); /usr/local/cuda bound read-only; SRC bound
#       at /root/gpuoversub, a checkout under a 0700 home as a new user's
#       is. The root shares the machine's network (its non-loopback
#       addresses keep Slurm's getaddrinfo and Open MPI working). On failure
#       it tears down what it made.
#   .ci/in-root.sh ROOT CMD [ARG...]
#       Runs CMD as root inside ROOT (pivot_root in a mount namespace of its
#       own), in the checkout, with a clean environment; its exit status is
#       CMD's.
#   .ci/bare-root.sh down ROOT
#       Kills the processes still running in ROOT (by pid: those whose root
#       directory is ROOT's, in any mount namespace), unmounts by path
#       everything `up` mounted, and removes ROOT, never crossing into a
#       mount (SRC stays as it was). Safe to call twice and on a half-made
#       root; run it from an EXIT trap.
set -euo pipefail

checkout=root/gpuoversub	# where SRC is bound, relative to the root
mounts=("$checkout" usr/local/cuda dev sys proc)	# what `up` mounts, in unmount order

# The pids whose root directory is ROOT's: stat follows /proc/PID/root to
# the directory itself, so a process that pivoted into it matches too.
processes_in() {
	local want pid
	want=$(stat -Lc '%d:%i' "$1")
	for pid in $(ls /proc | grep -E '^[0-9]+$'); do
		[ "$pid" != $$ ] || continue
		[ "$(stat -Lc '%d:%i' "/proc/$pid/root" 2>/dev/null)" = "$want" ] && echo "$pid"
	done
	return 0
}

down() {
	local root=$1 pid
	[ -d "$root" ] || return 0
	for pid in $(processes_in "$root"); do
		kill -9 "$pid" 2>/dev/null || true
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
	local src=$1 release=${2:-bookworm} root script=()
	[ -d "$src" ] || { echo "bare-root: no source directory $src" >&2; return 1; }
	[ -f /usr/local/cuda/include/cuda.h ] || { echo "bare-root: no CUDA headers in /usr/local/cuda" >&2; return 1; }
	case $release in
	bookworm | trixie) ;;
	# This debootstrap may predate forky: testing is bootstrapped as sid is.
	forky) script=(/usr/share/debootstrap/scripts/sid) ;;
	*) echo "bare-root: unknown release '$release' (bookworm, trixie or forky)" >&2; return 1 ;;
	esac
	[ -n "${GOS_ROOT_TARBALL:-}" ] || command -v debootstrap >/dev/null ||
		{ echo "bare-root: no debootstrap (packaging/deps.sh ci)" >&2; return 1; }
	root=$(mktemp -d "/var/tmp/gos-$release-root-XXXXXX")
	chmod 755 "$root"
	trap 'down "$root"' ERR
	if [ -n "${GOS_ROOT_TARBALL:-}" ]; then
		tar -C "$root" -xf "$GOS_ROOT_TARBALL"
	else
		debootstrap --variant=minbase "$release" "$root" http://deb.debian.org/debian "${script[@]}" \
			>"$root.log" 2>&1 || { tail -20 "$root.log" >&2; rm -f "$root.log"; false; }
		rm -f "$root.log"
	fi
	# The registry's testing index is a dated snapshot whose Release has expired.
	[ "$release" != forky ] ||
		echo 'Acquire::Check-Valid-Until "false";' >"$root/etc/apt/apt.conf.d/99gos-snapshot"
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
	mkdir -p "$root/usr/local/cuda" "$root/$checkout"
	chmod 700 "$root/root"
	mount --bind /usr/local/cuda "$root/usr/local/cuda"
	mount -o remount,bind,ro "$root/usr/local/cuda"
	mount --bind "$src" "$root/$checkout"
	trap - ERR
	echo "$root"
}

case ${1:-} in
up) [ $# -ge 2 ] && [ $# -le 3 ] || { echo "usage: $0 up SRC [RELEASE]" >&2; exit 2; }; up "$2" "${3:-}" ;;
down) [ $# -eq 2 ] || { echo "usage: $0 down ROOT" >&2; exit 2; }; down "$2" ;;
*) echo "usage: $0 up SRC [RELEASE] | down ROOT" >&2; exit 2 ;;
esac
