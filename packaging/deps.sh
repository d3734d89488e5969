#!/usr/bin/env bash
# The dependency step of `make demo` and `make check` (and CI's): installs
# the Debian packages that packaging/debian-packages lists for the given
# uses and this machine lacks, in one apt-get call after saying which.
#   packaging/deps.sh [--list] USE...   USE: build, demo, check, package, ci
#   packaging/deps.sh --value VARIABLE  its value for this release (CLANG: 14, 19 or 21)
# --list prints the packages for those uses and does nothing else. Not
# root with packages missing: says the command to run, and fails. Without
# the CUDA headers (cuda.h in $CUDA_INC, default /usr/local/cuda/include):
# says where to get them, and fails. GOS_NO_INSTALL=1 turns the step off,
# for sites that provision their machines themselves.
#
# The names are the release's: /etc/os-release's VERSION_CODENAME picks a
# `release` line of the list (Debian 12 bookworm, 13 trixie, testing
# forky). Another system is refused with a message naming those, rather
# than given names that may not exist there or mean other packages;
# GOS_DEBIAN_RELEASE=CODENAME takes a listed release's names regardless.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
list_file=${GOS_DEPS_LIST:-packaging/debian-packages}	# another list: for its tests
os_release=${GOS_OS_RELEASE:-}	# another file: for its tests
[ -n "$os_release" ] || { os_release=/etc/os-release; [ -e "$os_release" ] || os_release=/usr/lib/os-release; }

mode=install
case ${1:-} in
--list) mode=list; shift ;;
--value)
	[ $# -eq 2 ] || { echo "usage: packaging/deps.sh --value VARIABLE" >&2; exit 2; }
	mode=value; shift ;;
*) ;;
esac
if [ "$mode" != value ]; then
	[ $# -gt 0 ] || { echo "usage: packaging/deps.sh [--list] build|demo|check|package|ci..." >&2; exit 2; }
	for use in "$@"; do
		case $use in build | demo | check | package | ci) ;; *)
			echo "packaging/deps.sh: unknown use '$use' (build, demo, check, package or ci)" >&2; exit 2 ;;
		esac
	done
fi
[ "$mode" = install ] && [ "${GOS_NO_INSTALL:-0}" = 1 ] && exit 0

# This machine's release: a codename the list has a `release` line for.
codenames=$(awk '$1 == "release" { print $2 }' "$list_file")
supported=$(awk '$1 == "release" {
	printf "%s%s (%s)", sep, ($3 ~ /^[0-9]+$/ ? "Debian " $3 : $3), $2; sep = ", " }' "$list_file")
if [ -n "${GOS_DEBIAN_RELEASE:-}" ]; then
	release=$GOS_DEBIAN_RELEASE
	grep -qxF -- "$release" <<<"$codenames" || {
		echo "packaging/deps.sh: GOS_DEBIAN_RELEASE=$release is not a release of $list_file: $supported" >&2; exit 2; }
else
	# os-release is shell assignments (os-release(5)); read in a subshell.
	# shellcheck disable=SC1090
	IFS=$'\t' read -r os_id os_codename os_name < <(. "$os_release" 2>/dev/null
		printf '%s\t%s\t%s\n' "${ID:-unknown}" "${VERSION_CODENAME:--}" "${PRETTY_NAME:-${NAME:-an unknown system}}")
	release=
	[ "${os_id:-}" = debian ] && grep -qxF -- "${os_codename:-}" <<<"$codenames" && release=$os_codename
	if [ -z "$release" ]; then
		cat >&2 <<MSG
packaging/deps.sh: this machine runs ${os_name:-an unknown system} ($os_release: ID=${os_id:-unknown}, VERSION_CODENAME=${os_codename:--}),
  and $list_file names gpuoversub's packages only for
  $supported.
  GOS_DEBIAN_RELEASE=${codenames##*$'\n'} (or another codename above) takes that release's names
  (the newest are the likeliest to exist on a newer Debian), or
  GOS_NO_INSTALL=1 skips this step on a machine you provision yourself.
MSG
		exit 1
	fi
fi

# The list with the release's names: each $VARIABLE replaced by the value
# its release line gives. "?" before a name: a variable it lacks.
resolved=$(awk -v rel="$release" '
	$1 == "release" && $2 == rel { for (i = 4; i <= NF; i++) { eq = index($i, "="); val[substr($i, 1, eq - 1)] = substr($i, eq + 1) } }
	$1 == "release" || /^#/ || NF == 0 { next }
	FNR != NR {
		name = $1
		while (match(name, /\$[A-Za-z_][A-Za-z0-9_]*/)) {
			v = substr(name, RSTART + 1, RLENGTH - 1)
			if (!(v in val)) { name = "?" name; break }
			name = substr(name, 1, RSTART - 1) val[v] substr(name, RSTART + RLENGTH)
		}
		$1 = name; print
	}' "$list_file" "$list_file")
bad=$(awk '$1 ~ /^\?/ { print substr($1, 2) }' <<<"$resolved")
[ -z "$bad" ] || { echo "packaging/deps.sh: $list_file's $release line sets no value for: $bad" >&2; exit 2; }

if [ "$mode" = value ]; then
	value=$(awk -v rel="$release" -v var="$1" '$1 == "release" && $2 == rel {
		for (i = 4; i <= NF; i++) if (index($i, var "=") == 1) { print substr($i, length(var) + 2); found = 1 } }
		END { exit !found }' "$list_file") ||
		{ echo "packaging/deps.sh: $list_file's $release line sets no $1" >&2; exit 2; }
	echo "$value"
	exit 0
fi

# `make` builds with the build packages: every other use needs them too.
wanted=$(awk -v uses="build $*" '
	BEGIN { n = split(uses, u, " "); for (i = 1; i <= n; i++) want[u[i]] = 1 }
	{ k = split($2, f, ","); for (i = 1; i <= k; i++) if (f[i] in want) { print $1; next } }
	' <<<"$resolved")
if [ "$mode" = list ]; then
	echo "$wanted"
	exit 0
fi

what=${GOS_DEPS_FOR:-packaging/deps.sh $*}	# the make target it runs for
cuda_inc=${CUDA_INC:-/usr/local/cuda/include}
if [ ! -f "$cuda_inc/cuda.h" ]; then
	cat >&2 <<MSG
$what: the CUDA toolkit's headers are missing ($cuda_inc/cuda.h).
  gpuoversub compiles against cuda.h and opens the driver at run time, so the
  headers are all it needs, no GPU or driver. Install the CUDA toolkit from
  NVIDIA (https://developer.nvidia.com/cuda-downloads, the Debian 12 or 13
  network repo, package cuda-toolkit; on testing, Debian 13's or the
  runfile), or set CUDA_INC to a directory holding cuda.h.
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
echo "$what: installing the Debian packages it needs that are missing ($list_file, $release's names):"
echo "  $missing"
echo "  with apt-get install --no-install-recommends; this takes a few minutes on a fresh machine."
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp /tmp/gpuoversub-deps-XXXXXX.log)
started=$(date +%s)
# A machine that never ran apt-get update knows no packages at all.
if ! apt-get update -q >"$log" 2>&1; then
	tail -20 "$log" >&2
	cat >&2 <<MSG
$what: apt-get update failed, so apt cannot see the packages above (its whole
  output: $log). Fix what it names in the sources apt reads
  (/etc/apt/sources.list, /etc/apt/sources.list.d/) or the network, then run
  it again. A dated snapshot whose Release file has expired needs
  Acquire::Check-Valid-Until "false"; in /etc/apt/apt.conf.d/.
MSG
	exit 1
fi
# shellcheck disable=SC2086
if ! apt-get install -y -q --no-install-recommends $missing >>"$log" 2>&1; then
	tail -20 "$log" >&2
	echo "$what: apt-get could not install the packages above (its whole output: $log)" >&2
	! grep -q 'Unable to locate package' "$log" ||
		echo "  A package apt does not know: the names are $list_file's for $release; does apt read $release's archive (main)?" >&2
	exit 1
fi
rm -f "$log"
echo "$what: installed them ($(($(date +%s) - started)) s)."
