#!/usr/bin/env bash
# The dependency step of `make demo` and `make check` (and CI's): installs
# the Debian packages that packaging/debian-packages lists for the given
# uses and this machine lacks, in one apt-get call after saying which.
#   packaging/deps.sh [--list] USE...   USE: build, demo, check, package, ci
# --list prints the packages for those uses and does nothing else. Not
# root with packages missing: says the command to run, and fails. Without
# the CUDA headers (cuda.h in $CUDA_INC, default /usr/local/cuda/include):
# says where to get them, and fails. GOS_NO_INSTALL=1 turns the step off,
# for sites that provision their machines themselves.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
list_file=${GOS_DEPS_LIST:-packaging/debian-packages}	# another list: for its tests

list=0
[ "${1:-}" = --list ] && { list=1; shift; }
[ $# -gt 0 ] || { echo "usage: packaging/deps.sh [--list] build|demo|check|package|ci..." >&2; exit 2; }
for use in "$@"; do
	case $use in build | demo | check | package | ci) ;; *)
		echo "packaging/deps.sh: unknown use '$use' (build, demo, check, package or ci)" >&2; exit 2 ;;
	esac
done
# `make` builds with the build packages: every other use needs them too.
wanted=$(awk -v uses="build $*" '
	BEGIN { n = split(uses, u, " "); for (i = 1; i <= n; i++) want[u[i]] = 1 }
	/^#/ || NF == 0 { next }
	{ k = split($2, f, ","); for (i = 1; i <= k; i++) if (f[i] in want) { print $1; next } }
	' "$list_file")
if [ "$list" -eq 1 ]; then
	echo "$wanted"
	exit 0
fi
[ "${GOS_NO_INSTALL:-0}" = 1 ] && exit 0

what=${GOS_DEPS_FOR:-packaging/deps.sh $*}	# the make target it runs for
cuda_inc=${CUDA_INC:-/usr/local/cuda/include}
if [ ! -f "$cuda_inc/cuda.h" ]; then
	cat >&2 <<MSG
$what: the CUDA toolkit's headers are missing ($cuda_inc/cuda.h).
  gpuoversub compiles against cuda.h and opens the driver at run time, so the
  headers are all it needs, no GPU or driver. Install the CUDA toolkit from
  NVIDIA (https://developer.nvidia.com/cuda-downloads, Debian 12 network repo,
  package cuda-toolkit), or set CUDA_INC to a directory holding cuda.h.
MSG
	exit 1
fi

# shellcheck disable=SC2086 # one package name per word
missing=$(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' $wanted 2>/dev/null |
	awk '$1 == "ii" { print $2 }' | sort | comm -13 - <(echo "$wanted" | sort) | tr '\n' ' ')
missing=${missing% }
[ -n "$missing" ] || exit 0

if [ "$(id -u)" -ne 0 ]; then
	cat >&2 <<MSG
$what needs these Debian packages, which are not installed:
  $missing
Run it as root (sudo $what) to have them installed, or install them yourself:
  sudo apt-get install --no-install-recommends $missing
(GOS_NO_INSTALL=1 skips this step.)
MSG
	exit 1
fi
echo "$what: installing the Debian packages it needs that are missing (packaging/debian-packages):"
echo "  $missing"
echo "  with apt-get install --no-install-recommends; this takes a few minutes on a fresh machine."
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp /tmp/gpuoversub-deps-XXXXXX.log)
started=$(date +%s)
# A machine that never ran apt-get update knows no packages at all.
# shellcheck disable=SC2086
if ! { apt-get update -q && apt-get install -y -q --no-install-recommends $missing; } >"$log" 2>&1; then
	tail -20 "$log" >&2
	echo "$what: apt-get could not install the packages above (its whole output: $log)" >&2
	exit 1
fi
rm -f "$log"
echo "$what: installed them ($(($(date +%s) - started)) s)."
