#!/usr/bin/env bash
# kbuild.sh HEADERS MODULE_DIR [MAKE ARGUMENTS...]: Kbuild on the module in
# MODULE_DIR with the kernel's flags only. The caller's CFLAGS, LDFLAGS and
# the like (hardening flags for userspace, say), and the make command-line
# variables that would carry them in, stay out.
set -euo pipefail
headers=$1 dir=$2
shift 2
exec env -u CFLAGS -u CPPFLAGS -u CXXFLAGS -u LDFLAGS -u MAKEFLAGS -u MAKEOVERRIDES -u MFLAGS \
	make -C "$headers" M="$dir" "$@"
