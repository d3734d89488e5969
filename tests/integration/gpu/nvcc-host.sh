#!/bin/sh
# nvcc-host.sh NVCC [CACHE_DIR]: can NVCC build CUDA programs with this
# machine's host compiler and C library? Prints nothing when it can, else
# one line saying why not, and exits 0 either way. Measured (2026-11-28):
# CUDA 13.0 refuses gcc 16 (crt/host_config.h), and with gcc 15 on glibc
# 2.43 its math headers clash with glibc's rsqrt, so on Debian testing no
# compiler there serves it. The answer is kept in CACHE_DIR, by nvcc, g++
# and glibc version, since make asks on every run.
nvcc=$1 cache=${2:-}
[ -x "$nvcc" ] || { echo "no nvcc at $nvcc"; exit 0; }
nvcc_version=$("$nvcc" --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
gcc_version=$(g++ -dumpfullversion 2>/dev/null || echo none)
glibc_version=$(getconf GNU_LIBC_VERSION 2>/dev/null | sed 's/^glibc //')
key="nvcc-$nvcc_version-g++-$gcc_version-glibc-$glibc_version"
if [ -n "$cache" ] && [ -f "$cache/$key" ]; then
	cat "$cache/$key"
	exit 0
fi
work=$(mktemp -d /tmp/nvcc-host-XXXXXX)
trap 'rm -rf "$work"' EXIT
echo '__global__ void probe() {}' >"$work/probe.cu"
answer=
if ! "$nvcc" -c "$work/probe.cu" -o "$work/probe.o" >"$work/log" 2>&1; then
	if grep -q 'unsupported GNU version' "$work/log"; then
		answer="nvcc $nvcc_version does not support the host compiler, g++ $gcc_version"
	elif grep -q 'incompatible with that of previous function "rsqrt' "$work/log"; then
		answer="nvcc $nvcc_version's math headers clash with glibc $glibc_version's rsqrt (host compiler g++ $gcc_version)"
	else
		answer="nvcc $nvcc_version cannot compile an empty kernel with g++ $gcc_version: $(grep -m1 error "$work/log")"
	fi
fi
if [ -n "$cache" ]; then
	mkdir -p "$cache" && printf '%s' "$answer${answer:+
}" >"$cache/$key"
fi
[ -z "$answer" ] || echo "$answer"
