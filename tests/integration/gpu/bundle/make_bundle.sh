#!/usr/bin/env bash
# make_bundle.sh BUILD ARCHES TARBALL: lays out the GPU bundle (`make
# gpu-bundle`) and packs it. The layout mirrors the source tree, so that
# the GPU suite (tests/integration/gpu/run.sh) runs in it unchanged with
# BUILD=build:
#   run.sh, self-check.sh     the budgeted run and the check without a GPU
#   MANIFEST, SHA256SUMS      what was built, from what, needing which glibc
#   build/sbin, build/bin     gpuoversubd and gpuoversubctl: wrappers that run
#                             build/bundle/bin's binaries with build/bundle/lib
#   build/bundle/lib          every shared library they need beyond glibc
#   build/lib, build/tests    the agent, the test tools, the fake driver
#                             (self-check only) and the CUDA programs
#   tests/, bench/            the suite's scripts
# Debug information is stripped (it names the build tree); the bundle must
# not mention the build tree anywhere, and must stay within 48 MiB.
set -euo pipefail
build=$1 arches=$2 tarball=$3
src=$(pwd)
name=gpuoversub-gpu
stage=$build/gpu-bundle/stage
root=$stage/$name
rm -rf "$stage"
mkdir -p "$root"/build/{sbin,bin,lib,bundle/bin,bundle/lib,tests/tools,tests/fakecuda,tests/integration/gpu} \
	"$root"/tests/integration/gpu "$root"/bench
here=tests/integration/gpu/bundle

# put FILE DIR: an ELF file, stripped of what names the build tree.
put() { cp "$1" "$2/" && strip --strip-debug "$2/$(basename "$1")"; }
put "$build/sbin/gpuoversubd" "$root/build/bundle/bin"
put "$build/bin/gpuoversubctl" "$root/build/bundle/bin"
for prog in gpuoversubd:sbin gpuoversubctl:bin; do
	sed "s/@PROGRAM@/${prog%:*}/" "$here/wrapper.sh" >"$root/build/${prog#*:}/${prog%:*}"
	chmod 755 "$root/build/${prog#*:}/${prog%:*}"
done
put "$build/lib/libgpuoversub.so" "$root/build/lib"
for tool in gos_register gos_testapp libnccl-standin.so; do put "$build/tests/tools/$tool" "$root/build/tests/tools"; done
put "$build/tests/fakecuda/libcuda.so.1" "$root/build/tests/fakecuda"
for prog in "$build"/gpu-bundle/cuda/*; do put "$prog" "$root/build/tests/integration/gpu"; done
echo "$arches" >"$root/build/tests/integration/gpu/ARCHES"

# The libraries beyond glibc and the driver, as this machine resolves them;
# self-check.sh takes the pattern from MANIFEST.
glibc='^(linux-vdso|libc|libm|libdl|libpthread|librt|libresolv|ld-linux-x86-64|libcuda)\.so'
for elf in "$root"/build/bundle/bin/* "$root"/build/lib/*.so "$root"/build/tests/tools/*; do
	ldd "$elf" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' || true
done | sort -u | while read -r soname path; do
	[[ $soname =~ $glibc ]] || { cp -L "$path" "$root/build/bundle/lib/$soname" && strip --strip-debug "$root/build/bundle/lib/$soname"; }
done

install -m 755 "$here/run.sh" "$here/self-check.sh" "$root/"
cp tests/integration/gpu/*.sh tests/integration/gpu/*.py "$root/tests/integration/gpu/"
cp tests/integration/wait.bash "$root/tests/integration/"
cp bench/relief.bash "$root/bench/"

# The newest glibc symbol version any binary needs: the node's floor.
floor=$(find "$root/build" -type f -exec sh -c 'objdump -T "$1" 2>/dev/null' _ {} \; |
	grep -o 'GLIBC_2\.[0-9]*' | sort -uV | tail -1)
{
	echo "gpuoversub GPU bundle"
	echo "version	$(sed -n 's/^VERSION := //p' Makefile)"
	echo "commit	$(git -C "$src" describe --always --dirty 2>/dev/null || echo unknown)"
	echo "built	$(date -u +%FT%TZ) on $(uname -m)"
	echo "nvcc	$(${NVCC:-/usr/local/cuda/bin/nvcc} --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
	echo "arches	$arches (and PTX of the last)"
	echo "glibc	${floor#GLIBC_}"
	echo "system	$glibc"
	echo "libraries	$(ls "$root/build/bundle/lib" | tr '\n' ' ')"
} >"$root/MANIFEST"
(cd "$root" && find . -type f ! -name SHA256SUMS -print0 | sort -z | xargs -0 sha256sum >SHA256SUMS)

if grep -rl --binary-files=text -F "$src" "$root"; then
	echo "make_bundle.sh: the files above name the build tree $src" >&2
	exit 1
fi
tar -C "$stage" --owner=0 --group=0 -czf "$tarball.tmp" "$name"
size=$(stat -c %s "$tarball.tmp")
if [ "$size" -gt $((48 << 20)) ]; then
	echo "make_bundle.sh: the bundle is $((size >> 20)) MiB, over its 48 MiB" >&2
	rm -f "$tarball.tmp"
	exit 1
fi
mv "$tarball.tmp" "$tarball"
echo "gpu-bundle: $tarball, $((size / 1024)) KiB; $(sed -n 's/^glibc\t/glibc >= /p' "$root/MANIFEST")"
