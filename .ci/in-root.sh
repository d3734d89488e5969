#!/usr/bin/env bash
# .ci/in-root.sh ROOT CMD [ARG...]: runs CMD as root in a bare root that
# .ci/bare-root.sh made, in /src (the clone), with a clean environment.
# Its exit status is CMD's. See .ci/bare-root.sh for the rest.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 ROOT CMD [ARG...]" >&2; exit 2; }
root=$1; shift
[ -d "$root/src" ] && mountpoint -q "$root/proc" || { echo "in-root: $root is not a prepared bare root" >&2; exit 2; }
exec chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
	PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	/bin/bash -c 'cd /src && exec "$@"' in-root "$@"
