#!/bin/busybox sh
# shellcheck shell=dash
# /init of the module's test guest: load, test, unload, cycle, report
# (or, booted by run.sh --bench, the allocation ioctl's benchmark).
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp 2>/dev/null || mkdir -p /tmp
export PATH=/sbin:/bin
mkdir -p /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup
echo; echo "GOS: booted $(uname -r)"	# after the firmware's escape codes
if grep -qw gos.bench /proc/cmdline; then	# run.sh --bench: the ioctl benchmark only
	{ insmod /gpuoversub.ko && /kmod_bench && rmmod gpuoversub; } || echo "GOS: FAIL bench"
	echo "GOS: done"
	poweroff -f
fi
insmod /gpuoversub.ko || echo "GOS: FAIL insmod"
/kmod_test
# A module with open files must not go away under them: either node's.
for node in /dev/gpuoversub /dev/gpuoversub-control; do
	exec 3<"$node"
	if rmmod gpuoversub 2>/dev/null; then echo "GOS: FAIL rmmod succeeded while $node was open"; fi
	exec 3<&-
done
rmmod gpuoversub || echo "GOS: FAIL rmmod"
# The daemon in kernel mode, restarted under running jobs, on a fresh load.
insmod /gpuoversub.ko || echo "GOS: FAIL insmod for the daemon test"
/daemon_restart.sh
rmmod gpuoversub || echo "GOS: FAIL rmmod after the daemon test"
before=$(awk '/^SUnreclaim/ {print $2}' /proc/meminfo)
i=0
while [ $i -lt 20 ]; do
	i=$((i + 1))
	{ insmod /gpuoversub.ko && /kmod_cycle && rmmod gpuoversub; } ||
		echo "GOS: FAIL load/unload cycle $i"
done
after=$(awk '/^SUnreclaim/ {print $2}' /proc/meminfo)
echo "GOS: unreclaimable slab $before kB before 20 load/unload cycles, $after kB after"
[ $((after - before)) -gt 1024 ] && echo "GOS: FAIL slab grew by more than 1 MiB"
if dmesg | grep -E 'BUG:|WARNING:|Oops|general protection|Call Trace|gpuoversub.*leak'; then
	echo "GOS: FAIL the kernel complained"
fi
echo "GOS: done"
poweroff -f
