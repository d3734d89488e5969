#!/usr/bin/env bats
# Jobs in containers: a real single-node Slurm (tests/integration/slurm/
# harness.bash) whose jobs run the test program inside a Debian 11 image
# (glibc 2.31, GCC 10: image.sh) with Charliecloud's ch-run, as a site
# runs them. The image's program is built by the image's own g++ against
# its own C++ runtime. Like a site's integration (gpuoversub(7),
# Containers), ch-run binds the host's agent and driver at the paths the
# plugin and the job's environment name; the daemon's socket is under the
# host's /tmp, which ch-run binds itself. The daemon sees per-process usage
# through the fake driver's NVML, as through NVML on a GPU. Needs root.

bats_require_minimum_version 1.5.0
load ../wait
load ../slurm/jobs

setup_file() {
	export BUILD=${BUILD:-build}
	# Under the sanitizers the agent needs the host's sanitizer runtime,
	# which no image has: the floor is the plain build's to prove. (Each
	# test skips: bats before 1.9 fails a file whose setup_file skips.)
	if objdump -p "$BUILD/lib/libgpuoversub.so" | grep -q 'NEEDED.*lib[a-z]*san'; then
		export GOS_AGENT_SANITIZED=1
		return 0
	fi
	source tests/integration/slurm/harness.bash
	export IMAGE=$GOS_BUILD/images/bullseye
	tests/integration/containers/image.sh "$IMAGE" 3>&-
	image_program
	export GOS_SLURM_PORT=$(slurm_free_port)
	dir=$(mktemp -d /tmp/gos-containers-XXXXXX)
	slurm_up "$dir" 3>&- || { slurm_down; return 1; }
	slurm_job_env
	# The GPU at the fake driver's bus id, its per-process usage from the
	# fake NVML, as a real GPU's from NVML.
	gos_daemon_stop
	gos_policy "$GOS_SOCK" "$GOS_DIR/gos-state" "$GOS_DIR/reports" false 0000:40:00.0 |
		sed '/^  - {/s/}$/, nvml: true}/' >"$GOS_DIR/gpuoversub.yaml"
	daemon_with_nvml
}

daemon_with_nvml() { LD_LIBRARY_PATH=$GOS_BUILD/tests/fakecuda/nvml gos_daemon_start; }

teardown_file() {
	[ -n "${GOS_DIR:-}" ] || return 0
	source tests/integration/slurm/harness.bash
	slurm_teardown
}

setup() {
	[ -z "${GOS_AGENT_SANITIZED:-}" ] || skip "a sanitizer build's agent loads only where its runtime is"
	source tests/integration/slurm/harness.bash
	[ -S "$GOS_SOCK" ] || daemon_with_nvml
}

# The test program, built in the image by its g++ against the fake driver
# (the runs bind the build's own over it); and the mount point of the build
# tree, which the runs bind at its own path.
image_program() {
	local opt=$IMAGE/opt/gos
	rm -rf "$opt" && mkdir -p "$opt"/{src,include/gpuoversub,driver} "$IMAGE$GOS_BUILD/lib"
	cp tests/tools/gos_testapp.cpp tests/tools/testapp.hpp tests/tools/testapp_streams.cpp "$opt/src/"
	cp include/gpuoversub/*.h "$opt/include/gpuoversub/"
	cp "${CUDA_INC:-/usr/local/cuda/include}/cuda.h" "$opt/include/"
	cp "$GOS_BUILD/tests/fakecuda/libcuda.so.1" "$opt/driver/" && ln -s libcuda.so.1 "$opt/driver/libcuda.so"
	chroot "$IMAGE" /usr/bin/env -i PATH=/usr/bin:/bin g++ -std=c++2a -O1 -I/opt/gos/include \
		/opt/gos/src/gos_testapp.cpp /opt/gos/src/testapp_streams.cpp -o /opt/gos/gos_testapp \
		-L/opt/gos/driver -lcuda -ldl -lpthread || { echo "the test program does not build in the image" >&2; return 1; }
}

# The command a job runs the image's program with.
in_image() { echo "env USER=\$(id -un) ch-run -b $GOS_BUILD:$GOS_BUILD $IMAGE -- /opt/gos/gos_testapp"; }

# unmanaged_of JOB: its tenant's unmanaged bytes on GPU 0 in `status`.
unmanaged_of() { ctl --json status | python3 -c 'import json,sys; print(sum(t["unmanaged"] for t in json.load(sys.stdin)["gpus"][0]["tenants"] if t["job"] == int(sys.argv[1])))' "$1"; }

# report_of JOB FIELD: a field of the job's report.
report_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$GOS_DIR/reports/job-$1.json" "$2"; }

@test "the image is glibc 2.31, and its program runs there with the agent" {
	run chroot "$IMAGE" ldd --version
	[[ ${lines[0]} == *" 2.31" ]]
	printf 'alloc a 4\nverify a\nquit\n' | env USER=root GPUOVERSUB_SOCKET=/nonexistent LD_PRELOAD="$GOS_BUILD/lib/libgpuoversub.so" \
		ch-run -b "$GOS_BUILD:$GOS_BUILD" "$IMAGE" -- /opt/gos/gos_testapp >"$GOS_DIR/alone.out" 2>&1 ||
		{ cat "$GOS_DIR/alone.out"; false; }
	cat "$GOS_DIR/alone.out"	# shown only when the test fails
	[ "$(grep -c "^ok" "$GOS_DIR/alone.out")" -eq 3 ]	# the allocation, the check, quit
	# No daemon there: it passes through, and says so once.
	[ "$(grep -c 'cannot reach gpuoversubd' "$GOS_DIR/alone.out")" -eq 1 ]
}

@test "a job in the image competes with a bare-metal job: shares by weight, data intact, both reports" {
	# 2M chunks: one is the tolerance. 256 MiB each, 512 of 256.
	a=$(submit --gres=shard:3 --gpu-mem-oversub "$(job_script image 8 30 "$(in_image)")")
	b=$(submit --gres=shard:1 --gpu-mem-oversub "$(job_script bare 8 30)")
	wait_until 60 settled "$a" "$b" $((256 << 20))
	ctl explain "$a"	# shown only when the test fails
	shares_as_weights "$a" "$b" 2>&3
	job_completed "$a"
	job_completed "$b"
	for j in "$a" "$b"; do
		cat "$GOS_DIR/out-$j.txt"	# shown only when the test fails
		[ "$(grep -c '^ok' "$GOS_DIR/out-$j.txt")" -eq 17 ]	# 8 allocations, 8 checks, quit
		run ! grep -q '^err\|^bad' "$GOS_DIR/out-$j.txt"
		wait_until 20 test -f "$GOS_DIR/reports/job-$j.json"
		[ "$(report_of "$j" peak_device_bytes)" -gt 0 ]
		run ! grep -q "no process of this job reached" "$GOS_DIR/reports/job-$j.txt"
	done
	echo "evicted: image job $(report_of "$a" bytes_evicted), bare job $(report_of "$b" bytes_evicted)" >&3
	[ $(($(report_of "$a" bytes_evicted) + $(report_of "$b" bytes_evicted))) -gt 0 ]
}

@test "a task in a pid namespace of its own is its job's: it says hello by its own pid and is managed" {
	# As podman and Apptainer --pid run a task: the agent knows itself as
	# pid 2 or so, the daemon by its pid on the node.
	id=$(submit --gres=shard:1 --gpu-mem-oversub "$(job_script pidns 2 0 "unshare --pid --fork --mount-proc $(in_image)")")
	job_completed "$id"
	cat "$GOS_DIR/out-$id.txt"	# shown only when the test fails
	[ "$(grep -c '^ok' "$GOS_DIR/out-$id.txt")" -eq 5 ]
	run ! grep -q 'refused\|cannot reach' "$GOS_DIR/out-$id.txt"
	wait_until 20 test -f "$GOS_DIR/reports/job-$id.json"
	[ "$(report_of "$id" peak_device_bytes)" -eq $((64 << 20)) ]
}

@test "from a container, a process claims no job: not outside a job, and not another job from inside one" {
	release=$GOS_DIR/release-$BATS_TEST_NUMBER
	victim=$(submit --gres=shard:1 --gpu-mem-oversub --wrap "timeout 60 sh -c 'until [ -e $release ]; do sleep 0.1; done'")
	wait_until 30 listed "$victim"
	# Outside any job, naming the victim: refused, and the program runs on unmanaged.
	printf 'alloc a 4\nverify a\nquit\n' | env USER=root SLURM_JOB_ID="$victim" GPUOVERSUB_SOCKET="$GOS_SOCK" \
		LD_PRELOAD="$GOS_BUILD/lib/libgpuoversub.so" ch-run -b "$GOS_BUILD:$GOS_BUILD" "$IMAGE" -- /opt/gos/gos_testapp \
		>"$GOS_DIR/outsider.out" 2>&1 || { cat "$GOS_DIR/outsider.out"; false; }
	cat "$GOS_DIR/outsider.out"	# shown only when the test fails
	grep -q "gpuoversubd refused this process: process [0-9]* is not a task of any job" "$GOS_DIR/outsider.out"
	[ "$(grep -c '^ok' "$GOS_DIR/outsider.out")" -eq 3 ]
	# Inside another job's container, naming the victim: refused as that job's.
	id=$(submit --gres=shard:1 --gpu-mem-oversub "$(job_script claim 1 0 "SLURM_JOB_ID=$victim $(in_image)")")
	job_completed "$id"
	cat "$GOS_DIR/out-$id.txt"	# shown only when the test fails
	grep -q "refused this process: process [0-9]* belongs to job $id, not job $victim" "$GOS_DIR/out-$id.txt"
	[ "$(grep -c '^ok' "$GOS_DIR/out-$id.txt")" -eq 3 ]
	# The victim holds nothing of theirs.
	[ "$(resident_of "$victim")" -eq 0 ]
	touch "$release"
	job_completed "$victim"
}

@test "a job whose image lacks the agent runs unmanaged and intact; its memory is charged to it, and its report says so and names the fix" {
	# The driver bound in as the NVIDIA toolkit binds it; the agent not:
	# ld.so ignores the preload with a warning, and the program runs on.
	# An empty directory over the build's lib/, which ch-run's bind of the
	# host's /tmp would show where the build is under /tmp.
	release=$GOS_DIR/release-$BATS_TEST_NUMBER
	mkdir -p "$GOS_DIR/no-agent"
	bare_image="env LD_LIBRARY_PATH=/opt/gos/driver USER=\$(id -un) ch-run -b $GOS_BUILD/tests/fakecuda:/opt/gos/driver -b $GOS_DIR/no-agent:$GOS_BUILD/lib $IMAGE -- /opt/gos/gos_testapp"
	id=$(submit --gres=shard:1 --gpu-mem-oversub "$(job_script noagent 2 "timeout 60 sh -c 'until [ -e $release ]; do sleep 0.1; done'" "$bare_image")")
	wait_until 60 listed "$id"
	wait_until 60 eval '[ "$(unmanaged_of "$id")" = $((64 << 20)) ]' || {
		touch "$release"; ctl status; cat "$GOS_DIR/out-$id.txt"; grep "job $id" "$GOS_DIR/log/gpuoversubd.log"; false; }
	touch "$release"
	job_completed "$id"
	cat "$GOS_DIR/out-$id.txt"	# shown only when the test fails
	[ "$(grep -c '^ok' "$GOS_DIR/out-$id.txt")" -eq 5 ]
	grep -q "libgpuoversub.so.*cannot be preloaded" "$GOS_DIR/out-$id.txt"
	wait_until 20 test -f "$GOS_DIR/reports/job-$id.txt"
	cat "$GOS_DIR/reports/job-$id.txt"
	grep -q "no process of this job reached gpuoversubd here: .*gpuoversub(7), CONTAINERS" "$GOS_DIR/reports/job-$id.txt"
	grep -q "unmanaged: its processes without the agent held up to 64 MiB on the GPU, charged to the job" \
		"$GOS_DIR/reports/job-$id.txt"
	python3 -c 'import json,sys; g = json.load(open(sys.argv[1]))["gpus"][0]; sys.exit(0 if g["peak_unmanaged"] == 64 << 20 else 1)' \
		"$GOS_DIR/reports/job-$id.json"
}

# Job U's process that bypasses the agent holds 96 MiB of the 256 MiB GPU,
# then U's managed task asks 128 MiB and job N 256 MiB, at equal weights.
# Charged to U, the 96 MiB count in U's 128 MiB share and N keeps its 128;
# taken off the GPU for all (before), each would have had 80.
charged_to_u() { ctl --json status | python3 -c '
import json, sys
g = json.load(sys.stdin)["gpus"][0]
t = {x["job"]: x for x in g["tenants"]}
u, n = t.get(int(sys.argv[1])), t.get(int(sys.argv[2]))
if not u or not n or g["evicting"]:
	sys.exit(1)
half, chunk = g["capacity"] // 2, 2 << 20
print("U: unmanaged %d, resident %d, entitled %d; N: resident %d, entitled %d; external %d; capacity %d" % (u["unmanaged"], u["resident"], u["entitlement"], n["resident"], n["entitlement"], g["external"], g["capacity"]), file=sys.stderr)
sys.exit(0 if u["unmanaged"] == 96 << 20 and abs(n["resident"] - half) <= chunk and abs(u["resident"] - half) <= chunk and g["external"] == 0 else 1)' "$@"; }

@test "a job's process without the agent is charged to its own job as unmanaged memory: its neighbour keeps its share" {
	release=$GOS_DIR/release-$BATS_TEST_NUMBER
	held="timeout 90 sh -c 'until [ -e $release ]; do sleep 0.1; done'"
	cat >"$GOS_DIR/job-bypass.sh" <<SCRIPT
#!/bin/bash
out=$GOS_DIR/bypass-\$SLURM_JOB_ID.out
{ echo "alloc u 96"; $held; echo "verify u"; echo quit; } | env -u LD_PRELOAD $GOS_BUILD/tests/tools/gos_testapp >"\$out" 2>&1 &
timeout 30 sh -c "until grep -q '^ok' \$out; do sleep 0.1; done"
{ for i in 1 2 3 4; do echo "alloc b\$i 32"; done; $held
  for i in 1 2 3 4; do echo "verify b\$i"; done; echo quit; } | $GOS_BUILD/tests/tools/gos_testapp
wait
cat "\$out"
SCRIPT
	u=$(submit --gres=shard:1 --gpu-mem-oversub "$GOS_DIR/job-bypass.sh")
	wait_until 30 eval 'ctl --json status | grep -q "\"unmanaged\": $((96 << 20))"'
	n=$(submit --gres=shard:1 --gpu-mem-oversub "$(job_script neighbour 8 "$held")")
	wait_until 60 charged_to_u "$u" "$n" 2>"$GOS_DIR/charged.txt" || { cat "$GOS_DIR/charged.txt"; ctl status; false; }
	tail -n 1 "$GOS_DIR/charged.txt" >&3
	ctl status | grep -q "96 MiB unmanaged"
	ctl explain "$u" | grep -q "of it unmanaged 96 MiB: the job's processes without the agent hold it"
	grep -q "job $u: its process [0-9]* holds GPU 0 memory without the agent" "$GOS_DIR/log/gpuoversubd.log"
	touch "$release"
	job_completed "$u"
	job_completed "$n"
	cat "$GOS_DIR/out-$u.txt"	# shown only when the test fails
	[ "$(grep -c '^ok' "$GOS_DIR/out-$u.txt")" -eq 12 ]	# 4 + 4 + quit managed, 1 + 1 + quit bypassing
	wait_until 20 test -f "$GOS_DIR/reports/job-$u.txt"
	grep -q "unmanaged: its processes without the agent held up to 96 MiB on the GPU, charged to the job" \
		"$GOS_DIR/reports/job-$u.txt"
}
