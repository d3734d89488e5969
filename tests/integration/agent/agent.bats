#!/usr/bin/env bats
# The agent as a shared object: what it exports, and that it is harmless in
# programs that never touch CUDA.

setup() {
	BUILD=${BUILD:-build}
	AGENT=$(realpath $BUILD/lib/libgpuoversub.so)
}

# The sanitizer build's agent needs ASan in the program it is loaded into.
skip_if_sanitized() {
	if readelf -d "$AGENT" | grep -q libasan; then
		skip "the ASan build of the agent loads only into ASan programs"
	fi
}

@test "the agent exports exactly the hook table, dlsym, the public API and the MPI hooks' entry" {
	run bash -c "nm -D --defined-only $AGENT | awk '{print \$3}' | sort"
	[ "$status" -eq 0 ]
	expected=$( (sed -n 's/^GOS_HOOK([^,]*, *\([A-Za-z0-9_]*\),.*/\1/p' mpi-hooks/agent/hooks.def;
		echo dlsym; echo gpuoversub_mpi_report_ranks;	# for libgpuoversub_mpi.so only
		grep -o 'gpuoversub_[a-z_]*(' include/gpuoversub/gpuoversub.h | tr -d '(') | sort -u)
	[ "$output" = "$expected" ]
}

@test "the agent links no CUDA library and no C++ runtime" {
	skip_if_sanitized
	run bash -c "readelf -d $AGENT | grep NEEDED"
	[[ "$output" != *libcuda* ]]
	[[ "$output" != *libstdc++* ]]
}

@test "a program without CUDA runs unchanged under the agent" {
	skip_if_sanitized
	run env LD_PRELOAD=$AGENT sh -c 'echo hello; exit 3'
	[ "$status" -eq 3 ]
	[ "$output" = "hello" ]
}

@test "dlsym still finds ordinary symbols under the agent" {
	skip_if_sanitized
	run env LD_PRELOAD=$AGENT python3 -c 'import ctypes; print(ctypes.CDLL(None).getpid() > 0)'
	[ "$status" -eq 0 ]
	[ "$output" = "True" ]
}

@test "the example runs without the agent and uses it when present" {
	run env LD_LIBRARY_PATH=$BUILD/tests/fakecuda $BUILD/examples/priorities
	[ "$status" -eq 0 ]
	[[ "$output" == *"without gpuoversub"* ]]
	run env LD_LIBRARY_PATH=$BUILD/tests/fakecuda LD_PRELOAD=$AGENT GPUOVERSUB_SOCKET=/nonexistent \
		ASAN_OPTIONS=verify_asan_link_order=0 $BUILD/examples/priorities
	[ "$status" -eq 0 ]
	[[ "$output" == *"priorities set"* ]]
}

