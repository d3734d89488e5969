# The compatibility matrix, sourced by tests/integration/gpu/run.sh: one row per way a
# framework reaches GPU memory. Each row's program runs alone without the
# agent, then under the agent beside a job holding 60% of the managed
# capacity; the two runs must print the same result, and the row records
# how many of its bytes were evictable and how many were evicted and
# returned. bench/RESULTS.md keeps the table (bench/gpu_matrix.py), README
# and gpuoversub(7) what it means for users.
#
# A row's program takes MIB of ballast as its last argument, holds that
# much through its framework's allocator, prints "holding 1" and "holding 2"
# (with GOS_ROW_RELEASE=DIR set) and waits at each for DIR/1 and DIR/2, then
# prints "ok|bad ..." and "result {checksum, curve}"; exit 77 skips it
# (row_common.py, gpu_common.cuh). Between the two pauses it keeps working
# while the other job presses it.

# matrix_rows ROW: calls ROW NAME LABEL COMMAND... for every row.
matrix_rows() {
	local py="python3 tests/integration/gpu"
	$1 torch-default "PyTorch, default caching allocator" $py/torch_train.py
	$1 torch-expandable "PyTorch, expandable_segments:True" \
		env PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True $py/torch_train.py
	$1 torch-async "PyTorch, backend:cudaMallocAsync" env PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync \
		$py/torch_train.py
	$1 torch-graphs "PyTorch, CUDA graphs (torch.cuda.graph)" $py/torch_graphs.py
	$1 torch-resnet "PyTorch, ResNet-18 forward/backward (cuDNN, cuBLAS)" $py/torch_resnet.py
	$1 torch-ipc "PyTorch, torch.multiprocessing CUDA tensor to a second process" $py/torch_ipc.py
	$1 torch-ipc-device "PyTorch, the same with GPUOVERSUB_IPC=device" env GPUOVERSUB_IPC=device $py/torch_ipc.py
	$1 jax-prealloc "JAX, default preallocation (75%)" $py/jax_train.py
	$1 jax-noprealloc "JAX, XLA_PYTHON_CLIENT_PREALLOCATE=false" \
		env XLA_PYTHON_CLIENT_PREALLOCATE=false $py/jax_train.py
	$1 cupy-default "CuPy, default memory pool" $py/cupy_smoke.py default
	$1 cupy-async "CuPy, MemoryAsyncPool (cudaMallocAsync)" $py/cupy_smoke.py async
	$1 numba "Numba CUDA kernels and device arrays" $py/numba_kernel.py
	$1 triton "Triton kernel over PyTorch tensors" $py/triton_kernel.py
	$1 driver-pool "Driver API, explicit pool (cuMemPoolCreate, cuMemAllocFromPoolAsync) as RMM" \
		"$BUILD/tests/integration/gpu/pool_app"
	$1 threads-streams "Many threads and streams allocating and freeing while evicted" \
		"$BUILD/tests/integration/gpu/stream_churn"
}

list_row() { printf '%s\t%s\n' "$1" "$2"; }

# tenant_is JOB KEY OP BYTES: the daemon's figure for JOB compares so.
tenant_is() {
	local v
	v=$(status | python3 tests/integration/gpu/row_report.py field "$1" "$2") || return 1
	[ "$v" "$3" "$4" ]
}

# says FILE TEXT PID: FILE has a line TEXT, or PID has ended without one.
says() { grep -qx "$2" "$1" || ! kill -0 "$3" 2>/dev/null; }

# press DIR JR JH MIB PID: the holding job JH comes while row JR waits at
# "holding 1", stays until the row, working meanwhile, reaches "holding 2",
# and leaves; the row goes on once its memory is back.
press() {
	local dir=$1 jr=$2 jh=$3 mib=$4 pr=$5 ph
	under "$jh" "$gb" integrity "$mib" 10 >"$dir/holder.out" 2>&1 &
	ph=$!
	# Pressed: the holder has all its memory, so the row is down to its share.
	wait_until "$limit" holding "$dir/holder.out" "$ph"
	status >"$dir/pressed.json"
	touch "$dir/1"
	wait_until "$limit" says "$dir/agent.out" "holding 2" "$pr"
	wait "$ph"; echo $? >"$dir/holder.rc"
	wait_until 120 tenant_is "$jr" host -eq 0	# returned
	touch "$dir/2"
}

# run_row NAME LABEL COMMAND...: one row, judged by row_report.py.
run_row() {
	local name=$1 label=$2; shift 2
	want "$name" || want frameworks || return 0
	# A row takes 10-60 s (a framework's cold import twice, its work, the
	# press): none starts that could not end before the deadline.
	if ! fits "${GOS_GPU_ROW_S:-60}"; then
		printf '%s\t%s\tnot run: %s s left of the budget\n' "$name" "$label" "$(left)" >>"$results/rows/skipped.tsv"
		echo "SKIP $name: $(left) s left of the budget"
		return 0
	fi
	local dir=$work/rows/$name mib jr=0 jh pr
	mib=$(pct 60)
	mkdir -p "$dir"
	timeout -k 5 "$limit" "$@" "$mib" >"$dir/plain.out" 2>"$dir/plain.err"
	echo $? >"$dir/plain.rc"
	if [ "$(cat "$dir/plain.rc")" -eq 0 ]; then
		step; jr=$next_job; step; jh=$next_job
		under "$jr" env GOS_ROW_RELEASE="$dir" "$@" "$mib" >"$dir/agent.out" 2>"$dir/agent.err" &
		pr=$!
		wait_until "$limit" says "$dir/agent.out" "holding 1" $pr
		if kill -0 $pr 2>/dev/null; then press "$dir" "$jr" "$jh" "$mib" $pr; fi
		wait $pr; echo $? >"$dir/agent.rc"
		"$BUILD/bin/gpuoversubctl" --socket "$work/sock" --json report "$jr" >"$dir/report.json"
	fi
	python3 tests/integration/gpu/row_report.py row "$dir" "$name" "$label" "$jr" || failures=$((failures + 1))
}
