#!/usr/bin/env bats
# What the packages give container runtimes (docs/containers.md): the CDI
# spec of `gpuoversubctl cdi`, for OCI runtimes, and enroot's hook, which
# keeps the agent out of images that cannot load it and carries it into
# the others. No runtime runs here; each test takes well under a second.

setup() {
	CTL=${BUILD:-build}/bin/gpuoversubctl
	T=$BATS_TEST_TMPDIR
	mkdir -p "$T/lib" "$T/run/gos"
	: >"$T/lib/libgpuoversub.so"
	: >"$T/lib/libgpuoversub_mpi.so"
	printf 'socket: %s/run/gos/d.sock\n' "$T" >"$T/policy.yaml"
}

# check FILE PYTHON: asserts over the spec `s` in FILE.
check() { python3 -c "import json, sys; s = json.load(open(sys.argv[1])); $2" "$1"; }

@test "cdi: one spec binds the agent, the MPI hooks and the socket's directory at their own paths" {
	run "$CTL" cdi --config "$T/policy.yaml" --agent "$T/lib/libgpuoversub.so"
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" >"$T/spec.json"
	check "$T/spec.json" "
a, m, d = '$T/lib/libgpuoversub.so', '$T/lib/libgpuoversub_mpi.so', '$T/run/gos'
assert s['cdiVersion'] == '0.3.0' and s['kind'] == 'gpuoversub.org/agent', s
assert [(x['name'], x['containerEdits']) for x in s['devices']] == [
    ('all', {'env': ['LD_PRELOAD=' + a]}), ('mpi', {'env': ['LD_PRELOAD=' + a + ':' + m]})], s['devices']
e = s['containerEdits']
assert e['env'] == ['GPUOVERSUB_SOCKET=' + d + '/d.sock'], e
assert [(x['hostPath'], x['containerPath']) for x in e['mounts']] == [(a, a), (m, m), (d, d)], e['mounts']
assert all(x['options'][0] == 'ro' and x['options'][-1] == 'bind' for x in e['mounts']), e['mounts']
assert ('deviceNodes' in e) == $([ -c /dev/gpuoversub ] && echo True || echo False), e"
}

@test "cdi: without the MPI hooks there is no mpi device and no mount of them" {
	rm "$T/lib/libgpuoversub_mpi.so"
	run "$CTL" cdi -c "$T/policy.yaml" --agent "$T/lib/libgpuoversub.so"
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" >"$T/spec.json"
	check "$T/spec.json" "
assert [x['name'] for x in s['devices']] == ['all'], s['devices']
assert len(s['containerEdits']['mounts']) == 2, s['containerEdits']['mounts']"
}

@test "cdi: /dev/gpuoversub is a device node of the spec only where the module made it" {
	[ "$(id -u)" -eq 0 ] || skip "needs root for a private /dev"
	run unshare --mount sh -c "mount -t tmpfs none /dev && mknod /dev/gpuoversub c 1 3 &&
		$CTL cdi -c $T/policy.yaml --agent $T/lib/libgpuoversub.so"
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" >"$T/spec.json"
	check "$T/spec.json" "assert s['containerEdits']['deviceNodes'] == [{'path': '/dev/gpuoversub'}], s"
}

@test "cdi --output replaces the file whole, readable by all, with no temporary left" {
	mkdir "$T/cdi" && echo old >"$T/cdi/gpuoversub.json" && chmod 0600 "$T/cdi/gpuoversub.json"
	run "$CTL" cdi -c "$T/policy.yaml" --agent "$T/lib/libgpuoversub.so" --output "$T/cdi/gpuoversub.json"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	check "$T/cdi/gpuoversub.json" "assert s['kind'] == 'gpuoversub.org/agent'"
	[ "$(stat -c %a "$T/cdi/gpuoversub.json")" = 644 ]
	[ "$(ls -A "$T/cdi")" = gpuoversub.json ]
}

@test "cdi: each bad option, file or path is named, with status 2 for usage and 1 for the rest" {
	run "$CTL" cdi --frobnicate
	[ "$status" -eq 2 ]
	[[ ${lines[0]} == "gpuoversubctl cdi: unknown option '--frobnicate'" ]]
	[[ ${lines[1]} == "usage: gpuoversubctl cdi "* ]]
	run "$CTL" cdi -c "$T/policy.yaml" --output
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "gpuoversubctl cdi: --output needs a value" ]
	run "$CTL" cdi -c "$T/policy.yaml" --output ""
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "gpuoversubctl cdi: --output needs a file name" ]
	run "$CTL" cdi -c "$T/policy.yaml" extra
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "gpuoversubctl cdi: unexpected argument 'extra'" ]
	run "$CTL" cdi -c "$T/policy.yaml" --agent lib/libgpuoversub.so
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "gpuoversubctl cdi: --agent needs an absolute path, not 'lib/libgpuoversub.so'" ]
	run "$CTL" cdi -c "$T/policy.yaml" --agent "$T/none.so"
	[ "$status" -eq 1 ]
	[ "$output" = "gpuoversubctl cdi: the agent $T/none.so is not there (install libgpuoversub, or give its path with --agent)" ]
	run "$CTL" cdi -c "$T/missing.yaml" --agent "$T/lib/libgpuoversub.so"
	[ "$status" -eq 1 ]
	[[ $output == "gpuoversubctl cdi: $T/missing.yaml: "*"No such file or directory"* ]]
	echo 'socket: relative.sock' >"$T/bad.yaml"
	run "$CTL" cdi -c "$T/bad.yaml" --agent "$T/lib/libgpuoversub.so"
	[ "$status" -eq 1 ]
	[[ $output == "gpuoversubctl cdi: $T/bad.yaml:"*"'socket' must be an absolute path"* ]]
	echo 'socket: /d.sock' >"$T/root.yaml"
	run "$CTL" cdi -c "$T/root.yaml" --agent "$T/lib/libgpuoversub.so"
	[ "$status" -eq 1 ]
	[[ $output == *"the socket /d.sock is in /, which no container can have bound in"* ]]
	run "$CTL" cdi -c "$T/policy.yaml" --agent "$T/lib/libgpuoversub.so" -o "$T/no/such/dir/spec.json"
	[ "$status" -eq 1 ]
	[[ $output == "gpuoversubctl cdi: cannot open the directory $T/no/such/dir: No such file or directory" ]]
	[ ! -e "$T/no" ]
}

# The hook as installed (@LIBDIR@ made PREFIX/lib), run as enroot runs it:
# hook [VAR=VALUE...], in a step the plugin manages unless told otherwise,
# over the image $T/root; what it wrote is in $T/environ and $T/mounts.
hook() {
	sed 's|@LIBDIR@|/usr/lib|g' config/containers/enroot-hook.sh >"$T/hook.sh"
	: >"$T/mounts"
	env -i PATH="$PATH" ENROOT_ROOTFS="$T/root" ENROOT_ENVIRON="$T/environ" ENROOT_MOUNTS="$T/mounts" \
		GPUOVERSUB_SOCKET=/run/gpuoversub/gpuoversubd.sock "$@" bash "$T/hook.sh"
}

# Libraries the hook's own bash can preload, as enroot's does: the agent and
# the MPI hooks, by name, and another of the host's.
preloadable() {
	local libm
	libm=$(gcc -print-file-name=libm.so.6)
	for name in libgpuoversub.so libgpuoversub_mpi.so libother.so; do ln -sf "$libm" "$T/lib/$name"; done
}

# An image whose libc.so.6 says it is glibc VERSION, at image path LIB.
glibc_image() {
	mkdir -p "$T/root$(dirname "$2")" "$T/root/dev"
	printf 'GNU C Library (fake) stable release version %s.\n' "$1" >"$T/root$2"
}

@test "enroot hook: an image with glibc before 2.28, or musl, runs unmanaged, said once, its own preload kept" {
	glibc_image 2.17 /usr/lib64/libc-2.17.so
	ln -s /usr/lib64/libc-2.17.so "$T/root/usr/lib64/libc.so.6"	# absolute: followed in the image, not on the host
	echo 'LD_PRELOAD="/usr/lib/libjemalloc.so"' >"$T/environ"
	preloadable
	run hook LD_PRELOAD="$T/lib/libgpuoversub.so:$T/lib/libgpuoversub_mpi.so"
	[ "$status" -eq 0 ]
	[ "$output" = "gpuoversub: this job runs unmanaged in this container: its C library is glibc 2.17, and the agent needs glibc 2.28 or newer" ]
	[ "$(tail -n 2 "$T/environ")" = "LD_PRELOAD=/usr/lib/libjemalloc.so
GPUOVERSUB_UNMANAGED=its C library is glibc 2.17, and the agent needs glibc 2.28 or newer" ]

	rm -r "$T/root" && mkdir -p "$T/root/lib" && : >"$T/root/lib/ld-musl-x86_64.so.1"
	: >"$T/environ"
	run hook	# under pyxis: the task's preload is replaced by the image's, none
	[ "$status" -eq 0 ]
	[[ $output == *": its C library is musl, and the agent needs glibc 2.28 or newer" ]]
	grep -qx 'LD_PRELOAD=' "$T/environ"
}

@test "enroot hook: an image with glibc 2.28 or newer gets the agent in front of its own preload, and the socket" {
	glibc_image 2.31 /usr/lib/x86_64-linux-gnu/libc.so.6
	ln -s usr/lib "$T/root/lib"	# a merged /usr: both paths lead to it
	# enroot start in a step: ours from its own environment, not the host's other libraries.
	echo 'LD_PRELOAD=/opt/image/libtcmalloc.so' >"$T/environ"
	preloadable
	run hook LD_PRELOAD="$T/lib/libother.so:$T/lib/libgpuoversub.so:$T/lib/libgpuoversub_mpi.so"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ "$(tail -n 2 "$T/environ")" = "LD_PRELOAD=$T/lib/libgpuoversub.so:$T/lib/libgpuoversub_mpi.so:/opt/image/libtcmalloc.so
GPUOVERSUB_SOCKET=/run/gpuoversub/gpuoversubd.sock" ]
	# pyxis: no LD_PRELOAD reaches enroot; an image that sets one gets the agent ...
	echo 'LD_PRELOAD=/opt/image/libtcmalloc.so' >"$T/environ"
	run hook
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	grep -qx 'LD_PRELOAD=/usr/lib/libgpuoversub.so:/opt/image/libtcmalloc.so' "$T/environ"
	# ... and one that sets none leaves the task its own.
	: >"$T/environ"
	run hook
	[ "$status" -eq 0 ]
	[ "$(cat "$T/environ")" = "GPUOVERSUB_SOCKET=/run/gpuoversub/gpuoversubd.sock" ]
	[ ! -s "$T/mounts" ]
}

@test "enroot hook: a step gpuoversub does not manage is left alone, whatever the image" {
	glibc_image 2.17 /lib64/libc.so.6
	echo 'LD_PRELOAD=/opt/image/libtcmalloc.so' >"$T/environ"
	run hook GPUOVERSUB_SOCKET=
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ "$(cat "$T/environ")" = "LD_PRELOAD=/opt/image/libtcmalloc.so" ]
}

@test "enroot hook: /dev/gpuoversub is bound in only where the container's /dev lacks it" {
	[ "$(id -u)" -eq 0 ] || skip "needs root for a private /dev"
	glibc_image 2.36 /usr/lib/x86_64-linux-gnu/libc.so.6
	: >"$T/environ"
	sed 's|@LIBDIR@|/usr/lib|g' config/containers/enroot-hook.sh >"$T/hook.sh"
	run unshare --mount sh -c "mount -t tmpfs none /dev && mknod /dev/gpuoversub c 1 3 &&
		ENROOT_ROOTFS=$T/root ENROOT_ENVIRON=$T/environ ENROOT_MOUNTS=$T/mounts GPUOVERSUB_SOCKET=/s/d.sock bash $T/hook.sh"
	[ "$status" -eq 0 ]
	[ "$(cat "$T/mounts")" = "/dev/gpuoversub /dev/gpuoversub none x-create=file,bind,rw,nosuid,noexec,private,nofail" ]
	: >"$T/root/dev/gpuoversub" && : >"$T/mounts"	# enroot's /dev is the host's (no ENROOT_RESTRICT_DEV)
	run unshare --mount sh -c "mount -t tmpfs none /dev && mknod /dev/gpuoversub c 1 3 &&
		ENROOT_ROOTFS=$T/root ENROOT_ENVIRON=$T/environ ENROOT_MOUNTS=$T/mounts GPUOVERSUB_SOCKET=/s/d.sock bash $T/hook.sh"
	[ "$status" -eq 0 ] && [ ! -s "$T/mounts" ]
}

@test "ch-run-gpuoversub binds what LD_PRELOAD names of gpuoversub's and the socket's directory, in a managed step only" {
	mkdir -p "$T/bin"
	printf '#!/bin/sh\nprintf "%%s\\n" "$@"\n' >"$T/bin/ch-run" && chmod +x "$T/bin/ch-run"	# says what it was given
	preloadable
	run env PATH="$T/bin:$PATH" GPUOVERSUB_SOCKET=/run/gpuoversub/d.sock \
		LD_PRELOAD="$T/lib/libother.so $T/lib/libgpuoversub.so:$T/lib/libgpuoversub_mpi.so" \
		sh config/containers/ch-run-gpuoversub -w /img -- prog --flag
	[ "$status" -eq 0 ]
	[ "$(echo $output)" = "-b /run/gpuoversub -b $T/lib/libgpuoversub_mpi.so -b $T/lib/libgpuoversub.so -w /img -- prog --flag" ]
	run env PATH="$T/bin:$PATH" LD_PRELOAD="$T/lib/libgpuoversub.so" sh config/containers/ch-run-gpuoversub /img -- prog
	[ "$status" -eq 0 ] && [ "$(echo $output)" = "/img -- prog" ]
}
