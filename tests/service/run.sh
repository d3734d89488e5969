#!/usr/bin/env bash
# tests/service/run.sh [ROOT]: gpuoversubd under a booted systemd (issue
# 32). ROOT is a Debian root with systemd in it, of this machine's
# release, used up by this run; without one, make-root.sh makes one in
# /var/tmp, removed at the end. gpuoversub is installed into it from
# $BUILD (make install), or, with GOS_SERVICE_DEBS=DIR, from the .debs in
# DIR (.ci/packages.sh build's) by apt, as a site installs them: their
# maintainer scripts make the user and enable the unit; with
# GOS_SERVICE_NEXT_DEBS=DIR as well, the next version's, which the guest
# installs over them under a running job, before it purges them. Beside
# it: the shared libraries its programs load (as here), the module built
# against the kernel's headers, the fake CUDA driver, the test program and
# the checks (guest.sh); the root is packed
# whole into an initramfs, and Debian's kernel boots it in QEMU with
# systemd as its init (KVM where it works, else TCG). The guest's checks
# print TAP lines on a second serial port; this script prints them and
# fails on any "not ok", or when the guest does not finish.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
if [ $# -eq 0 ]; then
	root=$(mktemp -d /var/tmp/gos-service-root-XXXXXX)
	chmod 0755 "$root"	# its users (the job's) traverse it
	trap 'rm -rf --one-file-system "$root"' EXIT
	echo "== making a Debian root with systemd in $root"
	tests/service/make-root.sh "$root" 2>"$root.log" || { tail -20 "$root.log"; rm -f "$root.log"; exit 1; }
	rm -f "$root.log"
elif [ $# -eq 1 ] && [ -x "$1/lib/systemd/systemd" ]; then
	root=$(realpath "$1")
else
	echo "usage: $0 [ROOT] (a Debian root with systemd)" >&2
	exit 2
fi
out=$(realpath -m "$BUILD/service-vm")
here=tests/service
mkdir -p "$out"
headers=$(kmod/scripts/headers.sh)
abi=${headers#/usr/src/linux-headers-}
kmod/scripts/fetch.sh "$BUILD/kmod-vm" "$abi" >/dev/null
image=$BUILD/kmod-vm/boot/vmlinuz-$abi
source tests/tools/qemu_accel.bash
accel_probe "$out" "$image"

echo "== building gpuoversub.ko against $headers"
kmod/scripts/build-module.sh "$BUILD" "$headers" >"$out/module.log" 2>&1 || { cat "$out/module.log"; exit 1; }

install -d "$root/opt/gos/fakecuda" "$root/var/lib/prometheus/node-exporter"
if [ -n "${GOS_SERVICE_DEBS:-}" ]; then
	# The daemon's, the agent's and the plugin's packages (the module is
	# built below).
	debs=("$GOS_SERVICE_DEBS"/{gpuoversub,libgpuoversub,slurm-spank-gpuoversub}_*.deb)
	for deb in "${debs[@]}"; do [ -f "$deb" ] || { echo "no $deb" >&2; exit 2; }; done
	echo "== installing $(cd "$GOS_SERVICE_DEBS" && echo "${debs[@]##*/}") into $root with apt"
	install -d "$root/tmp/debs" && cp "${debs[@]}" "$root/tmp/debs/"
	cp -L /etc/resolv.conf "$root/etc/resolv.conf"
	chroot "$root" sh -c 'apt-get update -q && DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends /tmp/debs/*.deb' >"$out/install.log" 2>&1 ||
		{ tail -30 "$out/install.log"; exit 1; }
	rm -rf "$root/tmp/debs"
	touch "$root/opt/gos/from-packages"	# guest.sh checks what the packages set up, and purges them
	if [ -n "${GOS_SERVICE_NEXT_DEBS:-}" ]; then
		next=("$GOS_SERVICE_NEXT_DEBS"/{gpuoversub,libgpuoversub,slurm-spank-gpuoversub}_*.deb)
		for deb in "${next[@]}"; do [ -f "$deb" ] || { echo "no $deb" >&2; exit 2; }; done
		install -d "$root/opt/gos/next" && cp "${next[@]}" "$root/opt/gos/next/"	# guest.sh upgrades to them
	fi
else
	echo "== installing gpuoversub into $root"
	make --no-print-directory install DESTDIR="$root" PREFIX=/usr >"$out/install.log" 2>&1 || { cat "$out/install.log"; exit 1; }
	# The daemon's user, as a package's postinst makes it (sysusers.d).
	systemd-sysusers --root="$root" gpuoversub.conf >/dev/null
	# The plugin as the package's plugstack.conf.d snippet names it, but
	# where make install put it, and its agent.
	install -d "$root/etc/slurm/plugstack.conf.d"
	sed 's|^optional spank_gpuoversub.so|required /usr/lib/slurm/spank_gpuoversub.so agent=/usr/lib/libgpuoversub.so|' \
		packaging/gpuoversub.conf >"$root/etc/slurm/plugstack.conf.d/gpuoversub.conf"
fi
install -m 0755 "$BUILD/tests/tools/gos_testapp" "$BUILD/tests/tools/gos_register" "$BUILD/tests/tools/gos_record_request" \
	$here/guest.sh $here/node-job.sh "$root/opt/gos/"
# A record as the daemon sends the record helper (its golden segment).
head -n 1 tests/unit/report/golden/admin-comment-v3.txt | sed 's/^.*gpuoversub=/gpuoversub=/' >"$root/opt/gos/record.txt"
install -m 0644 tests/integration/wait.bash "$root/opt/gos/"
ln -sf /usr/lib/libgpuoversub.so "$root/opt/gos/libgpuoversub.so"
install -m 0755 "$BUILD/tests/fakecuda/libcuda.so.1" "$root/opt/gos/fakecuda/"
install -m 0644 "$BUILD/kmod-vm/module/kmod/gpuoversub.ko" "$root/opt/gos/"
# Each shared library the programs load, as this machine has it, where the
# root lacks it.
source tests/tools/guest_libraries.bash
copy_libraries "$root" "$root/usr/sbin/gpuoversubd" "$root/usr/bin/gpuoversubctl" \
	"$root/usr/libexec/gpuoversub/gpuoversub-slurm-facts" "$root/usr/lib/libgpuoversub.so" "$root/opt/gos/gos_testapp" "$root/opt/gos/gos_record_request" \
	"$root/opt/gos/fakecuda/libcuda.so.1" "$(find "$root/usr/lib" -name spank_gpuoversub.so | head -n 1)"
install -m 0644 $here/gos-guest.service "$root/etc/systemd/system/"
ln -sf /etc/systemd/system/gos-guest.service "$root/etc/systemd/system/multi-user.target.wants/gos-guest.service"
cat >"$root/etc/gpuoversub/gpuoversub.yaml" <<'YAML'
# The guest's policy: the shipped one's paths, one simulated GPU, Slurm
# read often and a job gone from Slurm ended soon.
reserve: 0
chunk_size: 2M
order_timeout: 5s
exporter: {textfile: /var/lib/prometheus/node-exporter/gpuoversub.prom, period: 1s}
slurm_weights: {refresh: 2s}
reconcile: {period: 1s, grace: 5s}
simulated_gpus:
  - {memory: 64M, numa_node: 0, pci_bus_id: "0000:17:00.0"}
  - {memory: 64M, numa_node: 0, pci_bus_id: "0000:18:00.0"}
YAML
grep -q '^gosuser:' "$root/etc/passwd" || chroot "$root" useradd -u 4242 -m gosuser
# The textfile directory handed to the daemon's user, as gpuoversubd(8)
# tells an admin.
chroot "$root" chown gpuoversub:gpuoversub /var/lib/prometheus/node-exporter
# A one-node Slurm as a GPU site runs it: slurmd under systemd on cgroup
# v2, proctrack/cgroup and task/cgroup with ConstrainDevices, two GPUs as
# device nodes with NVIDIA's numbers (made in the guest), each in 4
# shards. munge starts at boot; slurmctld and slurmd are started by the
# checks.
echo gosvm >"$root/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 gosvm\n' >"$root/etc/hosts"
cat >"$root/etc/slurm/slurm.conf" <<'CONF'
ClusterName=gos
SlurmctldHost=gosvm
SlurmUser=slurm
AuthType=auth/munge
StateSaveLocation=/var/lib/slurm/slurmctld
ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup,task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu,shard
KillWait=2
NodeName=gosvm CPUs=2 Gres=gpu:2,shard:8 State=UNKNOWN
PartitionName=gpu Nodes=gosvm Default=YES OverSubscribe=FORCE:4
CONF
cat >"$root/etc/slurm/cgroup.conf" <<'CONF'
CgroupPlugin=cgroup/v2
ConstrainDevices=yes
CONF
cat >"$root/etc/slurm/gres.conf" <<'CONF'
Name=gpu File=/dev/nvidia0
Name=gpu File=/dev/nvidia1
Name=shard Count=4 File=/dev/nvidia0
Name=shard Count=4 File=/dev/nvidia1
CONF
rm -f "$root/etc/systemd/system/multi-user.target.wants/"{slurmctld,slurmd}.service
# What the guest has no use for, and would only fail there. (A getty on
# the console would hang up the checks' terminal.)
for unit in serial-getty@ttyS0 getty@tty1; do ln -sf /dev/null "$root/etc/systemd/system/$unit.service"; done

echo "== packing the root"
(cd "$root" && find . -xdev \( -path ./usr/share/doc -o -path ./usr/share/man -o -path ./usr/share/locale \
	-o -path ./var/cache/apt \) -prune -o -print | cpio -o -H newc 2>/dev/null) >"$out/root.cpio"

accel_decide
echo "== booting $abi with systemd as init (${accel^^}${accel_why:+, $accel_why})"
log=$out/console.log results=$out/results.log
rm -f "$results"
start=$(date +%s)
# The console on the first serial port, the checks' lines on the second.
timeout 900 qemu-system-x86_64 "${accel_args[@]}" -m 2048 -smp 2 -nographic -no-reboot -nodefaults -serial stdio \
	-serial "file:$results" \
	-kernel "$image" -initrd "$out/root.cpio" \
	-append "console=ttyS0 rdinit=/lib/systemd/systemd panic=-1 quiet systemd.show_status=0" </dev/null >"$log" 2>&1 || true
echo "== the guest ran $(($(date +%s) - start)) s"
tr -d '\r' <"$results" 2>/dev/null || true
grep -q '^GOS: done, 0 failed' <(tr -d '\r' <"$results" 2>/dev/null) ||
	{ echo "FAIL: the console's last lines ($log):"; tr -d '\r' <"$log" | grep -v '^\s*$' | tail -20; exit 1; }
