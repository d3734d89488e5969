#!/usr/bin/env bats
# The SPANK plugin as a shared object: exports and hardening.

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
