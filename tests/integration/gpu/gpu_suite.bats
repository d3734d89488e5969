#!/usr/bin/env bats
# The GPU suite on a machine without a GPU: its programs still compile and
# parse, and running it says it skips.

@test "the GPU programs compile with nvcc" {
	NVCC=/usr/local/cuda/bin/nvcc
	[ -x "$NVCC" ] || skip "no nvcc in /usr/local/cuda"
	out=$BATS_TEST_TMPDIR/gpu_bench
	run "$NVCC" -O2 -arch=sm_90 -Werror all-warnings -o "$out" tests/integration/gpu/gpu_bench.cu
	[ "$status" -eq 0 ]
	[ -x "$out" ]
}

@test "the PyTorch and CuPy scripts parse" {
	run python3 -c 'import ast, sys; [ast.parse(open(f).read(), f) for f in sys.argv[1:]]' \
		tests/integration/gpu/torch_train.py tests/integration/gpu/cupy_smoke.py bench/gpu_results.py
	[ "$status" -eq 0 ]
}

@test "the GPU suite skips cleanly on a machine without a GPU" {
	if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
		skip "this machine has a GPU: run make check-gpu"
	fi
	run tests/integration/gpu/run.sh
	[ "$status" -eq 0 ]
	[[ "$output" == SKIP:* ]]
}
