#!/usr/bin/env bats
# The GPU suite on a machine without a GPU: its programs still compile and
# parse, its bookkeeping judges rows right, and running it says it skips.

@test "the GPU programs compile with nvcc" {
	NVCC=/usr/local/cuda/bin/nvcc
	why=$(tests/integration/gpu/nvcc-host.sh "$NVCC")
	[ -z "$why" ] || skip "$why"
	for prog in gpu_bench pool_app stream_churn; do
		out=$BATS_TEST_TMPDIR/$prog
		run "$NVCC" -O2 -arch=sm_90 -Werror all-warnings -o "$out" "tests/integration/gpu/$prog.cu" \
			-L/usr/local/cuda/lib64/stubs -lcuda
		echo "$prog: $output"
		[ "$status" -eq 0 ]
		[ -x "$out" ]
	done
}

@test "make check goes on without the GPU bundle where this release's gcc is too new for nvcc, and refuses where there is no nvcc" {
	# An nvcc that answers as CUDA 13.0 does to gcc 16 (nvcc-host.sh).
	mkdir -p "$BATS_TEST_TMPDIR/cuda"
	cat >"$BATS_TEST_TMPDIR/cuda/nvcc" <<'NVCC'
#!/bin/sh
[ "$1" != --version ] || { echo 'Cuda compilation tools, release 99.0, V99.0.0'; exit 0; }
echo '#error -- unsupported GNU version! gcc versions later than 15 are not supported!' >&2
exit 1
NVCC
	chmod +x "$BATS_TEST_TMPDIR/cuda/nvcc"
	run make --no-print-directory BUILD="$BATS_TEST_TMPDIR/build" NVCC="$BATS_TEST_TMPDIR/cuda/nvcc" check-features
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"make gpu-bundle and its self-check skipped on this release: nvcc 99.0 does not support the host compiler"* ]]
	run make --no-print-directory BUILD="$BATS_TEST_TMPDIR/build" NVCC="$BATS_TEST_TMPDIR/none/nvcc" GOS_ALLOW_SKIP= check-features
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"set GOS_ALLOW_SKIP=gpu-bundle"* ]]
	# bundle.bats names the release's reason in each skip.
	run env BUILD="$BATS_TEST_TMPDIR/build" NVCC="$BATS_TEST_TMPDIR/cuda/nvcc" bats -f 'one tarball' tests/integration/gpu/bundle.bats
	echo "$output"
	[[ "$output" == *"# skip no GPU bundle on this release: nvcc 99.0 does not support the host compiler"* ]]
}

@test "the matrix's Python programs and the result scripts parse" {
	run python3 -c 'import ast, sys; [ast.parse(open(f).read(), f) for f in sys.argv[1:]]' \
		tests/integration/gpu/*.py bench/gpu_results.py bench/gpu_matrix.py
	[ "$status" -eq 0 ]
	run bash -n tests/integration/gpu/run.sh
	[ "$status" -eq 0 ]
}

@test "a matrix row whose module is missing skips and says which" {
	run python3 -c 'import sys; sys.path.insert(0, "tests/integration/gpu"); import row_common; row_common.need("gos_no_such_module")'
	[ "$status" -eq 77 ]
	[[ "$output" == "SKIP: gos_no_such_module is not importable (ModuleNotFoundError: "* ]]
}

@test "every matrix row has its line in bench/RESULTS.md" {
	run tests/integration/gpu/run.sh --list
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -ge 14 ]
	for entry in "${lines[@]}"; do
		grep -q "^| \`${entry%%$'\t'*}\` | " bench/RESULTS.md || { echo "no line for ${entry%%$'\t'*}"; false; }
	done
}

# judge NAME: row_report.py on what the test left in $dir.
judge() { python3 tests/integration/gpu/row_report.py row "$dir" "$1" "a label" 7; }

@test "a row is correct only when both runs agree and the holder is intact" {
	dir=$BATS_TEST_TMPDIR/row
	mkdir -p "$dir"
	printf '0\n' >"$dir/plain.rc"; printf '0\n' >"$dir/agent.rc"; printf '0\n' >"$dir/holder.rc"
	printf 'ok fine\nresult {"checksum": "abc", "curve": [1.0, 0.5]}\n' >"$dir/plain.out"
	printf 'holding 1\nholding 2\nok fine\nresult {"checksum": "abc", "curve": [1.0, 0.5003]}\n' >"$dir/agent.out"
	echo '{"gpus": [{"tenants": [{"job": 7, "demand": 1073741824, "unevictable": 268435456, "host": 1}]}]}' \
		>"$dir/pressed.json"
	echo '{"bytes_evicted": 209715200, "bytes_returned": 209715200}' >"$dir/report.json"
	run judge same
	[ "$status" -eq 0 ]
	[[ "$output" == "PASS same yes: evictable 768 MiB of 1024 MiB, evicted 200 MiB, returned 200 MiB; ok fine" ]]
	python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["correct"] == "yes", r' "$dir/row.json"

	printf 'ok fine\nresult {"checksum": "abc", "curve": [1.0, 0.6]}\n' >"$dir/agent.out"
	run judge curve
	[ "$status" -eq 1 ]
	[[ "$output" == *"FAIL curve no:"*"loss point 1: 0.5 without the agent, 0.6 with it"* ]]

	printf 'ok fine\nresult {"checksum": "abd", "curve": [1.0, 0.5]}\n' >"$dir/agent.out"
	run judge checksum
	[ "$status" -eq 1 ]
	[[ "$output" == *"checksum abc without the agent, abd with it"* ]]

	printf 'bad cudaErrorInvalidValue\n' >"$dir/agent.out"; printf '1\n' >"$dir/agent.rc"
	run judge broken
	[ "$status" -eq 1 ]
	[[ "$output" == *"fails under the agent (exit 1): bad cudaErrorInvalidValue"* ]]

	printf 'ok fine\nresult {"checksum": "abc", "curve": [1.0, 0.5]}\n' >"$dir/agent.out"; printf '0\n' >"$dir/agent.rc"
	printf 'bad 12\n' >"$dir/holder.out"; printf '1\n' >"$dir/holder.rc"
	run judge holder
	[ "$status" -eq 1 ]
	[[ "$output" == *"the holding job's data: bad 12"* ]]

	printf 'SKIP: jax is not importable (ImportError: none)\n' >"$dir/plain.out"; printf '77\n' >"$dir/plain.rc"
	run judge skipped
	[ "$status" -eq 0 ]
	[[ "$output" == "SKIP skipped skipped: "*"jax is not importable"* ]]
}

@test "measured rows replace their lines in the results table and keep the others" {
	results=$BATS_TEST_TMPDIR/RESULTS.md
	printf '# Benchmark results\n\n## On a GPU\n' >"$results"
	tests/integration/gpu/run.sh --list | python3 bench/gpu_matrix.py "$results" not-run "no GPU here"
	echo '{"name": "numba", "label": "Numba", "correct": "yes", "evictable": "1 MiB of 2 MiB",
	       "evicted": "1 MiB", "returned": "1 MiB", "note": "ok | fine"}' >"$BATS_TEST_TMPDIR/numba.json"
	python3 bench/gpu_matrix.py "$results" measured "Some GPU" "$BATS_TEST_TMPDIR/numba.json"
	grep -q "^| \`numba\` | Numba | yes | 1 MiB of 2 MiB | 1 MiB / 1 MiB | $(date +%F) | Some GPU | ok / fine |$" "$results"
	grep -q '^| `triton` | Triton kernel over PyTorch tensors | not yet run (no GPU here) |' "$results"
	[ "$(grep -c '^| `' "$results")" -eq "$(tests/integration/gpu/run.sh --list | wc -l)" ]
	[ "$(grep -c 'gpu_matrix:begin' "$results")" -eq 1 ]
}

@test "the GPU suite skips cleanly on a machine without a GPU" {
	if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
		skip "this machine has a GPU: run make check-gpu"
	fi
	run tests/integration/gpu/run.sh
	[ "$status" -eq 0 ]
	[[ "$output" == SKIP:* ]]
}
