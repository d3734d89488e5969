#!/usr/bin/env bats
# The SPANK plugin as a shared object: exports and hardening.

bats_require_minimum_version 1.5.0

setup() {
	BUILD=${BUILD:-build}
	PLUGIN=$BUILD/lib/spank_gpuoversub.so
}

@test "the plugin exports only the SPANK entry points and plugin identity" {
	run bash -c "nm -D --defined-only $PLUGIN | awk '{print \$3}' | grep -v -E '^(slurm_spank_[a-z_]+|plugin_(name|type|version)|spank_plugin_version)$'"
	[ "$output" = "" ]
	nm -D --defined-only "$PLUGIN" | grep -q ' slurm_spank_job_epilog$'
	nm -D --defined-only "$PLUGIN" | grep -q ' plugin_name$'
}

@test "the plugin is built hardened: full RELRO, stack protector, fortified calls" {
	readelf -d "$PLUGIN" | grep -q 'BIND_NOW'
	readelf -l "$PLUGIN" | grep -q 'GNU_RELRO'
	nm -D "$PLUGIN" | grep -q '__stack_chk_fail'
	nm -D "$PLUGIN" | grep -q '_chk@'
}

@test "the plugin carries its own C++ runtime" {
	run bash -c "readelf -d $PLUGIN | grep NEEDED"
	[[ "$output" != *libstdc++* ]]
}

# The int a defined symbol of the plugin holds, as the loader finds it.
int_symbol() {
	local addr
	addr=$(nm -D --defined-only "$PLUGIN" | awk -v s="$1" '$3 == s { print $1 }')
	[ -n "$addr" ] || return 1
	objdump -s --start-address=0x$addr --stop-address=$((0x$addr + 4)) "$PLUGIN" |
		awk '/^ [0-9a-f]+ / { b = $2; printf "%d\n", strtonum("0x" substr(b,7,2) substr(b,5,2) substr(b,3,2) substr(b,1,2)) }'
}

@test "where Slurm reads it (25.05 on), a failing init would fail the job, never drain the node" {
	version=$(sed -n 's/^#define SLURM_VERSION_NUMBER \(0x[0-9a-f]*\).*/\1/p' /usr/include/slurm/slurm_version.h)
	if [ $((version)) -lt $((0x190500)) ]; then
		run ! int_symbol slurm_spank_init_failure_mode	# an older Slurm has no such symbol
		return
	fi
	expected=$(printf '#include <slurm/slurm_errno.h>\n#include <stdio.h>\nint main(void) { printf("%%d", ESPANK_JOB_FAILURE); }\n' |
		gcc -x c - -o "$BATS_TEST_TMPDIR/mode" && "$BATS_TEST_TMPDIR/mode")
	run int_symbol slurm_spank_init_failure_mode
	echo "declared: $output; ESPANK_JOB_FAILURE: $expected"
	[ "$status" -eq 0 ] && [ "$output" = "$expected" ]
}
