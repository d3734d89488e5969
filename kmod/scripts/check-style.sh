#!/usr/bin/env bash
# make kmod-check: checkpatch.pl --strict over the module and the engine it
# hosts, and a sparse build (C=2); any finding fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
headers=$(kmod/scripts/headers.sh)
out=$(realpath -m "$BUILD/kmod-vm")
kmod/scripts/fetch.sh "$out" "${headers#/usr/src/linux-headers-}"
files=(kmod/*.c kmod/*.h kmod/engine/*.c kmod/engine/*.h kmod/engine/kernel/*.c kmod/engine/user/*.c)
echo "== checkpatch --strict: ${#files[@]} files"
report=$(perl "$out/checkpatch/checkpatch.pl" --strict --no-tree --no-signoff --terse -f "${files[@]}" |
	grep -v '^total: 0 errors, 0 warnings, 0 checks' || true)
[ -z "$report" ] || { echo "$report"; exit 1; }
echo "== sparse (C=2)"
src=$out/sparse
rm -rf "$src" && mkdir -p "$src" && cp -r kmod include "$src/"
findings=$(kmod/scripts/kbuild.sh "$headers" "$src/kmod" C=2 modules 2>&1 | grep -E 'warning|error' | grep -v 'Skipping BTF' || true)
[ -z "$findings" ] || { echo "$findings"; exit 1; }
echo "kmod-check: checkpatch and sparse clean"
