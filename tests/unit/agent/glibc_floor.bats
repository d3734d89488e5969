#!/usr/bin/env bats
# What is preloaded into tasks, and the fake driver that stands for the one
# container runtimes bind in, loads in any x86_64 image with glibc 2.28 or
# newer and takes no C++ runtime from it (common/compat/glibc_floor.cpp).
# tests/integration/containers/ loads them in a glibc 2.31 image.

libs() {
	local b=${BUILD:-build}
	echo "$b/lib/libgpuoversub.so $b/tests/fakecuda/libcuda.so.1"
	[ ! -e "$b/lib/libgpuoversub_mpi.so" ] || echo "$b/lib/libgpuoversub_mpi.so"
}

setup() {
	[ "$(uname -m)" = x86_64 ] || skip "the floor's versions are x86_64's"
	# Under the sanitizers the runtime interposes the same calls: no floor.
	! objdump -p "${BUILD:-build}/lib/libgpuoversub.so" | grep -q 'NEEDED.*lib[a-z]*san' ||
		skip "a sanitizer build has no glibc floor"
}

@test "no library preloaded into tasks needs a glibc version above 2.28" {
	for lib in $(libs); do
		above=$(objdump -T "$lib" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\(?GLIBC_2\.[0-9.]+\)?$/) { v = $i; gsub(/[()]/, "", v); split(v, p, "."); if (p[2] + 0 > 28) print v, $NF } }')
		[ -z "$above" ] || { echo "$lib needs, above GLIBC_2.28:"; echo "$above"; false; }
	done
}

@test "none of them takes a C++ runtime from the image" {
	for lib in $(libs); do
		cxx=$(objdump -p "$lib" | awk '$1 == "NEEDED" && $2 ~ /^lib(stdc\+\+|gcc_s)/ { print $2 }'
		      objdump -T "$lib" | grep -oE '(GLIBCXX|CXXABI|GCC)_[0-9.]+' | sort -u)
		[ -z "$cxx" ] || { echo "$lib takes from the image: $cxx"; false; }
	done
}

@test "each needs libpthread.so.0 and libdl.so.2, where glibc before 2.34 keeps the old versions" {
	for lib in $(libs); do
		needed=$(objdump -p "$lib" | awk '$1 == "NEEDED" { print $2 }')
		grep -qx libpthread.so.0 <<<"$needed" && grep -qx libdl.so.2 <<<"$needed" ||
			{ echo "$lib needs only: $needed"; false; }
	done
}
