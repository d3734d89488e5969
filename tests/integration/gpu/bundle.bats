#!/usr/bin/env bats
# The GPU bundle (`make gpu-bundle`, tests/integration/gpu/bundle/) without a
# GPU: it is one tarball within 48 MiB, its self-check passes where it is
# unpacked and fails on a missing library, its run.sh skips without a GPU,
# and what a run leaves becomes the tables of bench/RESULTS.md and the
# README. .ci/bundle-selfcheck.sh runs the self-check in a bare Debian root.

setup() {
	BUILD=${BUILD:-build}
	BUNDLE=$BUILD/gpuoversub-gpu-bundle.tar.gz
	# A release whose gcc and glibc this nvcc cannot use (bundle.mk) has no
	# bundle: each test says why.
	why=$(tests/integration/gpu/nvcc-host.sh "${NVCC:-/usr/local/cuda/bin/nvcc}" "$BUILD/gpu-bundle/nvcc-host")
	[ -z "$why" ] || skip "no GPU bundle on this release: $why"
	[ -f "$BUNDLE" ] || skip "no $BUNDLE: make gpu-bundle"
	[ "$(id -u)" -eq 0 ] || skip "the self-check registers jobs as the SPANK plugin does: root only"
	tar -C "$BATS_TEST_TMPDIR" -xzf "$BUNDLE"
	B=$BATS_TEST_TMPDIR/gpuoversub-gpu
}

teardown() {
	[ -z "${bystander:-}" ] || kill "$bystander" 2>/dev/null || true
}

@test "the bundle is one tarball of at most 48 MiB that names no build path" {
	[ "$(stat -c %s "$BUNDLE")" -le $((48 << 20)) ]
	run grep -rl --binary-files=text -F "$(realpath .)" "$B"
	echo "$output"
	[ "$status" -eq 1 ]
	grep -q '^arches	80 90' "$B/MANIFEST"
	for lib in libyaml-0.so.2 libhwloc.so.15 libudev.so.1; do [ -f "$B/build/bundle/lib/$lib" ]; done
}

@test "the self-check passes on the unpacked bundle: binaries load, an agent program is evicted and gets its data back" {
	run "$B/run.sh" --self-check
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"PASS every binary finds its libraries"* ]]
	[[ "$output" == *"PASS job 1 is evicted through the fake driver"* ]]
	[[ "$output" == *"PASS job 1's data intact after eviction and return"* ]]
	[[ "$output" != *FAIL* ]]
}

@test "the self-check fails on a library the bundle lacks, and names it" {
	rm "$B/build/bundle/lib/libyaml-0.so.2"
	run "$B/self-check.sh"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"FAIL files intact"*"libyaml-0.so.2"* ]]
	# gpuoversubctl reads the policy too (its cdi command): both are named.
	[[ "$output" == *"FAIL every binary finds its libraries: "*"build/bundle/bin/gpuoversubd: libyaml-0.so.2 => "* ]]
	[[ "$output" == *"FAIL every binary finds its libraries: "*"build/bundle/bin/gpuoversubctl: libyaml-0.so.2 => "* ]]
}

@test "run.sh without a GPU says so and succeeds; a bad budget is refused" {
	if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
		skip "this machine has a GPU"
	fi
	run "$B/run.sh" --budget 540 --results "$BATS_TEST_TMPDIR/r"
	[ "$status" -eq 0 ]
	[[ "$output" == "SKIP: no NVIDIA GPU on this machine"* ]]
	run "$B/run.sh" --budget soon
	[ "$status" -eq 2 ]
	[[ "$output" == *"--budget takes whole seconds, at least 30: 'soon'"* ]]
}

@test "a run's results become RESULTS.md's sections and the README's rows; stages that did not run keep theirs" {
	d=$BATS_TEST_TMPDIR/results
	mkdir -p "$d/lanes" "$d/matrix/rows"
	printf 'gpu\tSome GPU\ndriver\t1.2\ncapacity_mib\t16384\ndate\t2026-01-02\n' >"$d/lanes/gpu.tsv"
	printf 'stage\tstatus\tseconds\tcap\nlanes\tpass\t20\t45\n' >"$d/stages.tsv"
	printf 'lanes 1 evict 10.0 return 20.0\npinned d2h 40.0 h2d 50.0\n' >"$d/lanes/lanes.out"
	printf 'evict_gbs\t8.0\npinned_d2h_gbs\t40.0\n' >"$d/lanes/figures.tsv"
	echo '{"name": "numba", "label": "Numba", "correct": "yes", "evictable": "1 MiB of 2 MiB",
	       "evicted": "300 MiB", "returned": "300 MiB", "note": "ok"}' >"$d/matrix/rows/numba.json"
	printf 'triton\tTriton kernel over PyTorch tensors\tnot run: 30 s left of the budget\n' >"$d/matrix/rows/skipped.tsv"
	cp bench/RESULTS.md README.md "$BATS_TEST_TMPDIR/"
	run python3 bench/gpu_results.py "$d" "$BATS_TEST_TMPDIR/RESULTS.md" "$BATS_TEST_TMPDIR/README.md"
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q '^| 1 | 10.0 | 0.250 | 20.0 | 0.400 | >= 0.80, >= 0.80 |$' "$BATS_TEST_TMPDIR/RESULTS.md"
	grep -q '^| Eviction (advise + prefetch to host, 4 GiB) / pinned D2H copy | 8.0 / 40.0 GB/s | 0.200 | >= 0.80 |$' \
		"$BATS_TEST_TMPDIR/RESULTS.md"
	grep -q '^Stages: lanes pass in 20 s of 45.$' "$BATS_TEST_TMPDIR/RESULTS.md"
	grep -q '^| `triton` | .* | not yet run (budget of the run on Some GPU, driver 1.2) |' "$BATS_TEST_TMPDIR/RESULTS.md"
	grep -q '^| Numba CUDA | Yes (Some GPU, driver 1.2, 2026-01-02) | Yes: 300 MiB evicted, 300 MiB returned |' \
		"$BATS_TEST_TMPDIR/README.md"
	# The relief and reserve stages did not run: their sections are as they were.
	diff <(sed -n '/bench_gpu_relief:begin/,/bench_gpu_relief:end/p' bench/RESULTS.md) \
		<(sed -n '/bench_gpu_relief:begin/,/bench_gpu_relief:end/p' "$BATS_TEST_TMPDIR/RESULTS.md")
	grep -q '^| JAX, default preallocation | Expected |' "$BATS_TEST_TMPDIR/README.md"
}

# A GPU-less stand-in for the node: nvidia-smi that finds a GPU, and the
# suite replaced by a stub that records how each stage called it. The
# sanity stage passes at once; the lanes stage hangs, with a child in a
# process group of its own, as a stuck CUDA program under `timeout` would.
stand_in() {
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\necho "GPU 0: Stand-in GPU"\n' >"$BATS_TEST_TMPDIR/bin/nvidia-smi"
	cat >"$B/tests/integration/gpu/run.sh" <<'STUB'
#!/usr/bin/env bash
printf '%s %s %s\n' "$GOS_GPU_ONLY" "$GOS_GPU_DEADLINE" "${GOS_GPU_RELIEF_REPS:-}" >"$GOS_GPU_RESULTS/called"
[ "$GOS_GPU_ONLY" = lanes ] || exit 0
timeout 300 sleep 300 &
echo $! >"$GOS_GPU_RESULTS/stuck"
wait
STUB
	chmod +x "$BATS_TEST_TMPDIR/bin/nvidia-smi" "$B/tests/integration/gpu/run.sh"
	resum
}
# resum: the stub's checksum, so that the self-check's holds.
resum() {
	(cd "$B" && grep -v ' ./tests/integration/gpu/run.sh$' SHA256SUMS >sums &&
		sha256sum ./tests/integration/gpu/run.sh >>sums && mv sums SHA256SUMS)
}

@test "run.sh ends within its budget: a stage stopped at its cap, its session killed, the later stages left out and said so" {
	stand_in
	sleep 300 >/dev/null 2>&1 3>&- &	# not the run's: must outlive it
	bystander=$!
	t0=$(date +%s)
	run env PATH="$BATS_TEST_TMPDIR/bin:$PATH" "$B/run.sh" --budget 40 --results "$BATS_TEST_TMPDIR/r" \
		--only sanity,lanes,reserve,relief,matrix
	t1=$(date +%s)
	echo "$output"
	r=$BATS_TEST_TMPDIR/r
	[ "$status" -eq 1 ]
	[ $((t1 - t0)) -le 40 ]
	read -r only deadline _ <"$r/sanity/called"
	[ "$only" = driver,runtime ]
	[ "$deadline" -le $((t0 + 40)) ]
	[ "$(cut -f1,2 "$r/stages.tsv" | sed -n 2p)" = "sanity	pass" ]
	[[ "$(sed -n 3p "$r/stages.tsv")" == "lanes	timeout at "* ]]
	for s in reserve relief matrix; do grep -q "^$s	skipped: " "$r/stages.tsv"; done
	! kill -0 "$(cat "$r/lanes/stuck")" 2>/dev/null
	kill -0 "$bystander"
	[ -f "$r/MANIFEST" ]
}

@test "run.sh runs the self-check, then each stage of the suite with its sections and cap, and packs the results" {
	stand_in
	sed -i 's/\[ "$GOS_GPU_ONLY" = lanes \]/false/' "$B/tests/integration/gpu/run.sh"
	resum
	run env PATH="$BATS_TEST_TMPDIR/bin:$PATH" "$B/run.sh" --results "$BATS_TEST_TMPDIR/r"
	echo "$output"
	[ "$status" -eq 0 ]
	run env PATH="$BATS_TEST_TMPDIR/bin:$PATH" "$B/run.sh" --results "$BATS_TEST_TMPDIR/r2" --only matrix --rows numba,triton
	[ "$status" -eq 0 ]
	[ "$(cut -d' ' -f1 "$BATS_TEST_TMPDIR/r2/matrix/called")" = numba,triton ]
	[ ! -e "$BATS_TEST_TMPDIR/r2/sanity" ]
	r=$BATS_TEST_TMPDIR/r
	[ "$(cut -d' ' -f1 "$r/lanes/called")" = lanes ]
	[ "$(cut -d' ' -f1 "$r/reserve/called")" = reserve ]
	[ "$(cut -d' ' -f1 "$r/relief/called")" = relief ]
	grep -q '^relief	pass	[0-9]*	110$' "$r/stages.tsv"
	[ "$(cut -d' ' -f1 "$r/matrix/called")" = frameworks ]
	grep -q '^PASS job 1 is evicted through the fake driver' "$r/bundle/log"
	[ "$(grep -c '	pass	' "$r/stages.tsv")" -eq 6 ]
	tar -tzf "$r.tgz" | grep -qx r/sanity/called
}

@test "the suite runs from the bundle: its driver-API sections on the fake driver behind a stand-in nvidia-smi, and their figures make the tables" {
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	cat >"$BATS_TEST_TMPDIR/bin/nvidia-smi" <<'SMI'
#!/bin/sh
case "$*" in
*compute_cap*) echo 9.0 ;; *memory.total*) echo 4096 ;; *memory.free*) echo 4000 ;;
*name*) echo "Stand-in GPU" ;; *driver_version*) echo 0.0 ;; *) echo "GPU 0: Stand-in GPU" ;;
esac
SMI
	chmod +x "$BATS_TEST_TMPDIR/bin/nvidia-smi"
	r=$BATS_TEST_TMPDIR/r
	mkdir -p "$r"
	run env -C "$B" PATH="$BATS_TEST_TMPDIR/bin:$PATH" LD_LIBRARY_PATH="$B/build/tests/fakecuda" FAKECUDA_MEMORY=4G \
		FAKECUDA_STATE="$BATS_TEST_TMPDIR/fake.state" GOS_GPU_CAPACITY_MIB=2048 GOS_GPU_RELIEF_REPS=1 BUILD=build \
		GOS_GPU_ONLY=driver,relief GOS_GPU_RESULTS="$r" tests/integration/gpu/run.sh
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"== the GPU programs as built for sm_80 90"* ]]
	[ "$(cut -f2 "$r/checks.tsv" | sort | uniq -c | tr -s ' ')" = " 11 PASS" ]
	grep -q '^capacity_mib	2048$' "$r/gpu.tsv"
	[ "$(sed -n '$p' "$r/relief.tsv" | cut -f1-7)" = "32	32	2048	1024	default	1	1" ]
	cp bench/RESULTS.md README.md "$BATS_TEST_TMPDIR/"
	python3 bench/gpu_results.py "$r" "$BATS_TEST_TMPDIR/RESULTS.md" "$BATS_TEST_TMPDIR/README.md"
	grep -q '^| 2048 MiB (32 GiB scaled) | 1024 MiB (32 GiB scaled) | default | 1 of 1 | [0-9.]* | [0-9.]* | - |$' \
		"$BATS_TEST_TMPDIR/RESULTS.md"
}
