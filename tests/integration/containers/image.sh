#!/usr/bin/env bash
# tests/integration/containers/image.sh DIR: the container tests' image, a
# Debian 11 (bullseye) directory image: glibc 2.31 and GCC 10, as an
# Ubuntu 20.04 based image has; g++ in it, so that the test program is
# built with the image's own compiler and C++ runtime. Made once with
# debootstrap (about 2 minutes) from the machine's Debian mirror, then
# kept: a second call returns at once, and calls at the same time wait for
# the one making it (CI starts one early, beside the build). Needs root.
# Prints progress on stderr; exits non-zero with the reason.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir=$1
mkdir -p "$(dirname "$dir")"
exec 9>"$dir.lock"
flock 9
[ -e "$dir/.gos-image-ready" ] && exit 0

# The mirror the machine's apt uses (deb822 or one-line form).
mirror=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p; s/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\(http[^[:space:]]*\).*/\2/p' \
	/etc/apt/sources.list.d/*.sources /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
	grep -v security | head -1 || true)
mirror=${mirror:-http://deb.debian.org/debian}
command -v debootstrap >/dev/null || { echo "image.sh: no debootstrap (apt-get install debootstrap)" >&2; exit 1; }

rm -rf "$dir"
started=$SECONDS
echo "image.sh: debootstrap bullseye from $mirror into $dir" >&2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
debootstrap --variant=minbase bullseye "$dir" "$mirror" >"$log" 2>&1 ||
	{ tail -20 "$log" >&2; echo "image.sh: debootstrap failed" >&2; exit 1; }
chroot "$dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
	apt-get install -y -qq --no-install-recommends g++ >"$log" 2>&1 ||
	{ tail -20 "$log" >&2; echo "image.sh: g++ did not install in the image" >&2; exit 1; }
chroot "$dir" ldd --version | sed -n 1p >&2	# sed reads it all: no SIGPIPE under pipefail
touch "$dir/.gos-image-ready"
echo "image.sh: made in $((SECONDS - started)) s" >&2
