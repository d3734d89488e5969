# Sourced by the QEMU tests (tests/integration/kmod/run.sh,
# tests/service/run.sh): KVM only where it works. /dev/kvm may be there
# and the guest still hang or fail (nested virtualisation: "failed to set
# MSR 0x10a" on some hosts), so the same kernel, with busybox alone, must
# say it booted within 15 s. GOS_KMOD_ACCEL=kvm or tcg decides without
# the probe.
#   accel_probe OUT IMAGE   starts the probe in the background
#   accel_decide            waits for it; sets accel_args (QEMU's options),
#                           accel (kvm or tcg) and accel_why (why not KVM)
# shellcheck shell=bash disable=SC2034 # the variables set are the caller's
accel_probe() {
	local out=$1 image=$2 probe
	accel=${GOS_KMOD_ACCEL:-} accel_why='' accel_probe_pid=''
	case $accel in
	kvm | tcg) accel_why="set by GOS_KMOD_ACCEL"; return 0 ;;
	"") ;;
	*) echo "GOS_KMOD_ACCEL must be kvm or tcg, not $accel" >&2; return 2 ;;
	esac
	if [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; then
		accel=tcg accel_why="no usable /dev/kvm"
		return 0
	fi
	probe=$out/kvm-probe
	accel_probe_log=$probe.log
	rm -rf "$probe" && mkdir -p "$probe/bin"
	cp /bin/busybox "$probe/bin/busybox"
	# Its line may follow the firmware's escape codes: found anywhere.
	printf '#!/bin/busybox sh\n/bin/busybox echo GOS: kvm probe booted\n/bin/busybox poweroff -f\n' >"$probe/init"
	chmod 0755 "$probe/init"
	(cd "$probe" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$probe.cpio.gz"
	# Its own shell, so that a QEMU that aborts (as when KVM refuses the
	# CPU's MSRs) is no job notice in our output; it ends within 15 s
	# even if the caller fails first.
	{ timeout 15 qemu-system-x86_64 -accel kvm -cpu host -m 256 -smp 1 -nographic -no-reboot -nodefaults -serial stdio \
		-kernel "$image" -initrd "$probe.cpio.gz" -append "console=ttyS0 panic=-1 quiet" \
		</dev/null >"$probe.log" 2>&1 || true; } 2>/dev/null &
	accel_probe_pid=$!
}

accel_decide() {
	if [ -n "$accel_probe_pid" ]; then
		wait "$accel_probe_pid"
		if tr -d '\r' <"$accel_probe_log" | grep -q 'GOS: kvm probe booted'; then
			accel=kvm
		else
			accel=tcg accel_why="KVM's probe guest did not boot: $(tr -d '\r' <"$accel_probe_log" | grep -m1 -i 'error' ||
				echo "no sign of it in 15 s")"
		fi
	fi
	if [ "$accel" = kvm ]; then accel_args=(-accel kvm -cpu host); else accel_args=(-accel tcg); fi
}
