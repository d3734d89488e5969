# systemd_apt ARGS...: apt-get ARGS as if systemd ran this machine, so that
# the packages' maintainer scripts start, restart and stop their services
# through systemd/systemctl, the stand-in, first on dpkg's PATH. Only apt and
# what it starts see it: in a private mount namespace /run/systemd/system
# exists, which the scripts test for, and policy-rc.d allows service actions
# where container images ship one that forbids them. Needs root and
# GOS_SYSTEMD_STATE (see systemd/systemctl).

systemd_apt() {
	local shim made= rc
	shim=$(realpath "$(dirname "${BASH_SOURCE[0]}")/systemd")
	# The mount point; an empty /run/systemd claims nothing (systemd's mark is system/).
	[ -d /run/systemd ] || { mkdir /run/systemd && made=1; }
	unshare --mount --propagation private bash -c '
		mount -t tmpfs gos-systemd /run/systemd && mkdir /run/systemd/system || exit 1
		if [ -e /usr/sbin/policy-rc.d ]; then mount --bind "$0/policy-rc.d" /usr/sbin/policy-rc.d || exit 1; fi
		exec apt-get -o DPkg::Path="$0:/usr/sbin:/usr/bin:/sbin:/bin" "$@"' "$shim" "$@"
	rc=$?
	[ -z "$made" ] || rmdir /run/systemd
	return $rc
}
