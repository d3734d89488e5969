#!/usr/bin/env bash
# build-module.sh BUILD HEADERS: builds gpuoversub.ko out of the source
# tree, in BUILD/kmod-vm/module (Kbuild writes beside its sources).
set -euo pipefail
out=$(realpath -m "$1/kmod-vm/module")
rm -rf "$out" && mkdir -p "$out"
cp -r kmod include "$out/"
kmod/scripts/kbuild.sh "$2" "$out/kmod" modules
