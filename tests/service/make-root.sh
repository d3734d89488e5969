#!/usr/bin/env bash
# tests/service/make-root.sh DIR: a Debian root with systemd for
# tests/service/run.sh, of this machine's release (debootstrap minbase
# from deb.debian.org with systemd, D-Bus, udev, kmod, procps and iproute2,
# munge, slurmctld and slurmd for a one-node Slurm, and jq for the checks),
# so that the programs built here run there. Progress on stderr.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
. /etc/os-release
script=()
# This debootstrap may predate testing's name: testing is bootstrapped as sid is.
[ -e "/usr/share/debootstrap/scripts/$VERSION_CODENAME" ] || script=(/usr/share/debootstrap/scripts/sid)
debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus,udev,kmod,procps,iproute2,munge,slurmctld,slurmd,jq \
	"$VERSION_CODENAME" "$1" http://deb.debian.org/debian "${script[@]}" >&2
