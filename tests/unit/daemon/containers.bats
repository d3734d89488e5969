#!/usr/bin/env bats
# What the packages give container runtimes (docs/containers.md): the CDI
# spec of `gpuoversubctl cdi`, for OCI runtimes. No runtime runs here; each
# test takes well under a second.

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
	[ "$status" -eq 0 ] && [ -z "$output" ]
	check "$T/cdi/gpuoversub.json" "assert s['kind'] == 'gpuoversub.org/agent'"
	[ "$(stat -c %a "$T/cdi/gpuoversub.json")" = 644 ]
	[ "$(ls -A "$T/cdi")" = gpuoversub.json ]
}

@test "cdi: each bad option, file or path is named, with status 2 for usage and 1 for the rest" {
	run "$CTL" cdi --frobnicate
	[ "$status" -eq 2 ] && [[ ${lines[0]} == "gpuoversubctl cdi: unknown option '--frobnicate'" ]]
	[[ ${lines[1]} == "usage: gpuoversubctl cdi "* ]]
	run "$CTL" cdi -c "$T/policy.yaml" --output
	[ "$status" -eq 2 ] && [ "${lines[0]}" = "gpuoversubctl cdi: --output needs a value" ]
	run "$CTL" cdi -c "$T/policy.yaml" --output ""
	[ "$status" -eq 2 ] && [ "${lines[0]}" = "gpuoversubctl cdi: --output needs a file name" ]
	run "$CTL" cdi -c "$T/policy.yaml" extra
	[ "$status" -eq 2 ] && [ "${lines[0]}" = "gpuoversubctl cdi: unexpected argument 'extra'" ]
	run "$CTL" cdi -c "$T/policy.yaml" --agent lib/libgpuoversub.so
	[ "$status" -eq 2 ] && [ "${lines[0]}" = "gpuoversubctl cdi: --agent needs an absolute path, not 'lib/libgpuoversub.so'" ]
	run "$CTL" cdi -c "$T/policy.yaml" --agent "$T/none.so"
	[ "$status" -eq 1 ]
	[ "$output" = "gpuoversubctl cdi: the agent $T/none.so is not there (install libgpuoversub, or give its path with --agent)" ]
	run "$CTL" cdi -c "$T/missing.yaml" --agent "$T/lib/libgpuoversub.so"
	[ "$status" -eq 1 ] && [[ $output == "gpuoversubctl cdi: $T/missing.yaml: "*"No such file or directory"* ]]
	echo 'socket: relative.sock' >"$T/bad.yaml"
	run "$CTL" cdi -c "$T/bad.yaml" --agent "$T/lib/libgpuoversub.so"
	[ "$status" -eq 1 ] && [[ $output == "gpuoversubctl cdi: $T/bad.yaml:"*"'socket' must be an absolute path"* ]]
	echo 'socket: /d.sock' >"$T/root.yaml"
	run "$CTL" cdi -c "$T/root.yaml" --agent "$T/lib/libgpuoversub.so"
	[ "$status" -eq 1 ] && [[ $output == *"the socket /d.sock is in /, which no container can have bound in"* ]]
	run "$CTL" cdi -c "$T/policy.yaml" --agent "$T/lib/libgpuoversub.so" -o "$T/no/such/dir/spec.json"
	[ "$status" -eq 1 ] && [[ $output == "gpuoversubctl cdi: cannot open the directory $T/no/such/dir: No such file or directory" ]]
	[ ! -e "$T/no" ]
}
