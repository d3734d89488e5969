#!/usr/bin/env bash
# .ci/in-root.sh ROOT CMD [ARG...]: runs CMD as root in a bare root that
# .ci/bare-root.sh made, in its checkout (/root/gpuoversub), with a clean
# environment. Its exit status is CMD's.
#
# Not a plain chroot: the multi-node harness needs / to be a mount point
# (`ip netns` makes it a slave) and `nsenter --mount` would leave a chroot.
# So CMD runs in a mount namespace of its own whose root is ROOT
# (pivot_root), with the machine's tree detached; what it mounts stays in
# that namespace and goes when its last process ends.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 ROOT CMD [ARG...]" >&2; exit 2; }
root=$(realpath "$1"); shift
[ -d "$root/root/gpuoversub" ] && mountpoint -q "$root/proc" ||
	{ echo "in-root: $root is not a prepared bare root" >&2; exit 2; }
# In the new namespace: ROOT becomes a mount point (with what is mounted
# under it), is pivoted onto, and the old root is detached; then the
# root's own env starts CMD.
exec unshare --mount --propagation private --fork -- /bin/sh -c '
	set -e
	mount --rbind "$0" "$0"
	cd "$0"
	pivot_root . .
	umount -l .
	cd /
	exec /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		/bin/bash -c "cd /root/gpuoversub && exec \"\$@\"" in-root "$@"' "$root" "$@"
