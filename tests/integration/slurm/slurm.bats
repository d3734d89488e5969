#!/usr/bin/env bats
# The SPANK plugin in a real Slurm: munge, slurmctld and slurmd on
# localhost, fake GPU GRES shared through shards, gpuoversubd with one
# simulated 256 MiB GPU, and jobs running a driver-API program on the fake
# CUDA driver under the agent the plugin preloads. Needs root.

load ../wait
load jobs

setup_file() {
	export BUILD=${BUILD:-build}
	source tests/integration/slurm/harness.bash
	export GOS_SLURM_PORT=$(slurm_free_port)
	dir=$(mktemp -d /tmp/gos-slurm-XXXXXX)
	slurm_up "$dir" 3>&- || { slurm_down; return 1; }
	slurm_job_env
}

teardown_file() {
	source tests/integration/slurm/harness.bash
	[ ! -f "$GOS_DIR/alive.pid" ] || kill "$(cat "$GOS_DIR/alive.pid")" 2>/dev/null || true
	slurm_teardown
}

setup() {
	source tests/integration/slurm/harness.bash
	plugstack
	sed -i 's/^over_ceiling: .*/over_ceiling: clamp/' "$GOS_DIR/gpuoversub.yaml"
	[ -S "$GOS_SOCK" ] || gos_daemon_start
}

demand() { ctl --json status | python3 -c 'import json,sys; print(sum(t["demand"] for g in json.load(sys.stdin)["gpus"] for t in g["tenants"]))'; }
demand_is() { [ "$(demand)" -eq "$1" ]; }

@test "a bad --gpu-mem-oversub value is refused at submit, saying what is accepted" {
	run sbatch --gres=shard:1 --gpu-mem-oversub=lots --wrap true
	[ "$status" -ne 0 ]
	[[ "$output" == *"accepted: on, off (any case), a FACTOR"* ]]
	run env SLURM_GPU_MEM_OVERSUB=-3 sbatch --gres=shard:1 --wrap true
	[ "$status" -ne 0 ]
	[[ "$output" == *"SLURM_GPU_MEM_OVERSUB"* ]]
}

@test "a factor above the ceiling is clamped, or refused, as the policy says, and the user is told" {
	run submit --gres=shard:1 --gpu-mem-oversub=8 --wrap true
	[ "$status" -eq 0 ]
	[[ "$output" == *"clamped to this cluster's ceiling of 4"* ]]
	sed -i 's/^over_ceiling: .*/over_ceiling: refuse/' "$GOS_DIR/gpuoversub.yaml"
	run sbatch --gres=shard:1 --gpu-mem-oversub=8 --wrap true
	[ "$status" -ne 0 ]
	[[ "$output" == *"refused: this cluster allows a factor of at most 4"* ]]
}

# The job's ceiling as explain gives it: asked, ceiling, entry, and the GPU's limit in MiB.
oversub_of() { ctl --json explain "$1" | python3 -c 'import json,sys; e = json.load(sys.stdin); o = e["oversub"]; print(o["asked"], o["ceiling"], o["ceiling_from"], e["gpus"][0]["limit"] >> 20)'; }

@test "a partition's max_oversub caps its jobs' factor where the job runs, and explain names the entry" {
	sed -i 's/^max_oversub: .*/max_oversub: {default: 4, partition: {debug: 2}}/' "$GOS_DIR/gpuoversub.yaml"
	gos_daemon_stop && gos_daemon_start
	release=$GOS_DIR/release-$BATS_TEST_NUMBER
	# At submit the partition is not known yet: 3 is within the plain ceiling.
	id=$(submit --gres=shard:1 --gpu-mem-oversub=3 --wrap "{ echo 'alloc b1 32'; timeout 60 sh -c 'until [ -e $release ]; do sleep 0.1; done'; echo quit; } | $GOS_BUILD/tests/tools/gos_testapp")
	wait_until 30 tenant "$id"
	# In the job's step the plugin capped 3 to debug's 2: twice the GPU's
	# 256 MiB; the daemon, once slurmctld has named the job's partition.
	wait_until 30 eval '[ "$(oversub_of "$id")" = "2 2.0 max_oversub.partition.debug 512" ]'
	ctl explain "$id" | grep -q "^--gpu-mem-oversub 2; ceiling on FACTOR 2 (max_oversub.partition.debug)"
	touch "$release"
	job_completed "$id"
	sed -i 's/^max_oversub: .*/max_oversub: 4/' "$GOS_DIR/gpuoversub.yaml"
	gos_daemon_stop && gos_daemon_start
}

# Job $1's partition, account and QOS as the daemon weighs it, then its
# weight and minimum on GPU 0.
weighed_as() {
	ctl --json explain "$1" | python3 -c '
import json, sys
e = json.load(sys.stdin)
print(e["partition"] or "-", e["account"] or "-", e["qos"] or "-", "%g" % e["gpus"][0]["weight"], e["gpus"][0]["min_bytes"] >> 20)'
}

@test "a job's own SLURM_JOB_QOS and SLURM_JOB_ACCOUNT weigh nothing: the names are slurmctld's" {
	cp "$GOS_DIR/gpuoversub.yaml" "$GOS_DIR/gpuoversub.yaml.orig"
	printf 'weights: {qos: {high: 10}, account: {root: 10}}\nmin_share: {qos: {high: 0.9}}\nballoon: {enabled: false}\n' \
		>>"$GOS_DIR/gpuoversub.yaml"
	gos_daemon_stop && gos_daemon_start
	release=$GOS_DIR/release-$BATS_TEST_NUMBER
	# The job says it is QOS high of account root, where Slurm runs it
	# with neither (no accounting here: slurmctld holds no QOS and no account).
	id=$(SLURM_JOB_QOS=high SLURM_JOB_ACCOUNT=root submit --gres=shard:1 --gpu-mem-oversub \
		--wrap "echo \"env: QOS=\$SLURM_JOB_QOS ACCOUNT=\$SLURM_JOB_ACCOUNT\"; { echo 'alloc b1 32'; timeout 60 sh -c 'until [ -e $release ]; do sleep 0.1; done'; echo quit; } | $GOS_BUILD/tests/tools/gos_testapp")
	wait_until 30 tenant "$id"
	first=$(weighed_as "$id")	# before slurmctld has answered, or after
	wait_until 30 eval '[ "$(weighed_as "$id" | cut -d" " -f1)" = debug ]'
	then=$(weighed_as "$id")
	echo "job $id: $(head -1 "$GOS_DIR/out-$id.txt"); weighed as (partition account QOS weight min-MiB): first '$first', with slurmctld's names '$then'" >&3
	grep -qx "env: QOS=high ACCOUNT=root" "$GOS_DIR/out-$id.txt"	# the job did say so
	# One shard of four: a quarter, the weight of any job so placed.
	[ "$first" = "- - - 0.25 0" ] || [ "$first" = "debug - - 0.25 0" ]
	[ "$then" = "debug - - 0.25 0" ]
	touch "$release"
	job_completed "$id"
	mv "$GOS_DIR/gpuoversub.yaml.orig" "$GOS_DIR/gpuoversub.yaml"
	gos_daemon_stop && gos_daemon_start
}

@test "the task gets the agent in LD_PRELOAD and the daemon's socket; a job without the option is untouched" {
	id=$(submit --gres=shard:1 --gpu-mem-oversub=2 --wrap 'echo "PRELOAD=$LD_PRELOAD"; echo "SOCK=$GPUOVERSUB_SOCKET"')
	job_completed "$id"
	grep -q "PRELOAD=$GOS_BUILD/lib/libgpuoversub.so" "$GOS_DIR/out-$id.txt"
	grep -q "SOCK=$GOS_SOCK" "$GOS_DIR/out-$id.txt"
	plain=$(submit --gres=shard:1 --wrap 'echo "PRELOAD=$LD_PRELOAD"')
	job_completed "$plain"
	grep -qx "PRELOAD=" "$GOS_DIR/out-$plain.txt"
	! grep -q "job $plain " "$GOS_DIR/log/gpuoversubd.log"
}

@test "steps and tasks are registered while the job runs and cleaned up after" {
	# The job runs until the test has seen it, whatever the machine's load.
	release=$GOS_DIR/release-$BATS_TEST_NUMBER
	id=$(submit --gres=shard:1 --gpu-mem-oversub --wrap "timeout 60 sh -c 'until [ -e $release ]; do sleep 0.1; done'")
	wait_until 30 listed "$id"
	tenant "$id"
	touch "$release"
	job_completed "$id"
	wait_until 20 test -f "$GOS_DIR/reports/job-$id.json"
	! listed "$id"
	! tenant "$id"
}

@test "two jobs overcommit one GPU and both finish with their data intact" {
	a=$(submit --gres=shard:1 --gpu-mem-oversub=2 "$(job_script a 5 4)")
	b=$(submit --gres=shard:1 --gpu-mem-oversub=2 "$(job_script b 5 4)")	# 320 MiB of 256
	job_completed "$a"
	job_completed "$b"
	for j in "$a" "$b"; do
		cat "$GOS_DIR/out-$j.txt"	# shown only when the test fails
		[ "$(grep -c '^ok' "$GOS_DIR/out-$j.txt")" -eq 11 ]
		! grep -q '^err\|^bad' "$GOS_DIR/out-$j.txt"
	done
	wait_until 20 test -f "$GOS_DIR/reports/job-$b.json"
	evicted=$(python3 -c 'import json,sys; print(sum(json.load(open(f))["bytes_evicted"] for f in sys.argv[1:]))' \
		"$GOS_DIR/reports/job-$a.json" "$GOS_DIR/reports/job-$b.json")
	[ "$evicted" -gt 0 ]
}

# What a four-rank MPI job must show, however it was launched: every rank
# ran, and the job's report has a record per rank, each managed and with
# its exchange counted.
four_ranks_reported() {
	local id=$1
	cat "$GOS_DIR/out-$id.txt"	# shown only when the test fails
	[ "$(grep -c '^rank [0-3] of 4 local [0-3] ok$' "$GOS_DIR/out-$id.txt")" -eq 4 ]
	wait_until 20 test -f "$GOS_DIR/reports/job-$id.json"
	python3 - "$GOS_DIR/reports/job-$id.json" <<'PY'
import json, sys
ranks = json.load(open(sys.argv[1]))["mpi_ranks"]
assert sorted(r["rank"] for r in ranks) == [0, 1, 2, 3], ranks
assert all(r["managed"] and r["exchanges"] == 1 for r in ranks), ranks
PY
}

@test "an MPI job under srun --mpi=pmix gets the MPI hooks, and its report the per-rank breakdown" {
	[ -x "$GOS_BUILD/tests/integration/mpi/gos_mpi_app" ] || skip "the MPI side was not built (make says why)"
	source tests/integration/mpi/launch.bash
	pmix_or_skip "the mpirun-inside-sbatch test below makes the same assertions"
	id=$(submit -n 4 -O --gres=shard:1 --gpu-mem-oversub \
		--wrap "ASAN_OPTIONS=\$ASAN_OPTIONS:detect_leaks=0 srun --mpi=pmix -n 4 -O $GOS_BUILD/tests/integration/mpi/gos_mpi_app basic")
	# (Open MPI's own leaks at finalize cannot be suppressed by name; see tests/integration/mpi/mpi.bats.)
	job_completed "$id"
	four_ranks_reported "$id"
}

# The launch left where Slurm has no mpi/pmix (Debian's 26.05), run on every
# release. The batch step is no step srun marks as MPI, so mpi_hooks=auto
# preloads the agent alone: the hooks here are the ones linked into
# gos_mpi_app (-lgpuoversub_mpi), as they must be in a program launched
# this way (or the plugstack's mpi_hooks=always). Four tasks on two CPUs
# (-O): Open MPI 5 and 6 refuse to bind them to cores, and in an allocation
# Open MPI 6 binds even with --oversubscribe; --bind-to none works on all.
@test "an MPI job under mpirun inside sbatch, with the hooks linked into the program: its report has the per-rank breakdown" {
	[ -x "$GOS_BUILD/tests/integration/mpi/gos_mpi_app" ] || skip "the MPI side was not built (make says why)"
	id=$(submit -n 4 -O --gres=shard:1 --gpu-mem-oversub \
		--wrap "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ASAN_OPTIONS=\$ASAN_OPTIONS:detect_leaks=0 timeout -k 5 60 mpirun -n 4 --bind-to none $GOS_BUILD/tests/integration/mpi/gos_mpi_app basic")
	job_completed "$id"
	four_ranks_reported "$id"
}

# mpi_ranks of job $1's report, as "rank:local_rank:managed ...".
rank_records() {
	wait_until 20 test -f "$GOS_DIR/reports/job-$1.json"
	python3 -c '
import json, sys
print(" ".join("%d:%d:%d" % (r["rank"], r["local_rank"], r["managed"]) for r in sorted(json.load(open(sys.argv[1]))["mpi_ranks"], key=lambda r: r["rank"])))' \
		"$GOS_DIR/reports/job-$1.json"
}

@test "mpirun inside sbatch, a program without the hooks: mpi_hooks=always preloads them and the report has every rank; auto, seeing no MPI step, does not" {
	[ -x "$GOS_BUILD/tests/integration/mpi/mpi_plain" ] || skip "the MPI side was not built (make says why)"
	local -A records
	for hooks in always auto; do
		plugstack mpi_hooks=$hooks
		id=$(submit -n 4 -O --gres=shard:1 --gpu-mem-oversub \
			--wrap "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ASAN_OPTIONS=\$ASAN_OPTIONS:detect_leaks=0 timeout -k 5 60 mpirun -n 4 --bind-to none $GOS_BUILD/tests/integration/mpi/mpi_plain")
		job_completed "$id"
		cat "$GOS_DIR/out-$id.txt"
		[ "$(grep -c '^rank [0-3] ok$' "$GOS_DIR/out-$id.txt")" -eq 4 ]
		records[$hooks]=$(rank_records "$id")
	done
	echo "always: ${records[always]}; auto: ${records[auto]}"
	[ "${records[always]}" = "0:0:1 1:1:1 2:2:1 3:3:1" ]
	[ -z "${records[auto]}" ]
}

# The job-wide record is the daemon's to send and write (accounting.bats):
# asked for by the plugstack while the node's daemon has the channel off,
# the epilog says so in slurmd's log, and the job is not held for it.
@test "the epilog logs the report and keeps it on disk; a job-wide part the daemon does not take is logged" {
	plugstack report_admin_comment=yes
	# The epilog seals with the harness's munged, as a site's epilog with
	# its own (from Slurm 23.02 it seals before the daemon says no); the
	# daemon, not restarted, keeps its channel off.
	cp "$GOS_DIR/gpuoversub.yaml" "$GOS_DIR/gpuoversub.yaml.orig"
	echo "jobwide: {munge_socket: $GOS_MUNGE_SOCK}" >>"$GOS_DIR/gpuoversub.yaml"
	id=$(submit --gres=shard:1 --gpu-mem-oversub "$(job_script e 2 0)")
	job_completed "$id"
	mv "$GOS_DIR/gpuoversub.yaml.orig" "$GOS_DIR/gpuoversub.yaml"
	grep -q "\[gpuoversub\] gpuoversub report for job $id on node $(hostname -s), GPU 0 (0000:17:00.0)" \
		"$GOS_DIR/log/slurmd.log"
	[ -f "$GOS_DIR/reports/job-$id.json" ]
	grep "job $id: the job-wide part not taken" "$GOS_DIR/log/slurmd.log" | grep -q "the job-wide channel is off on this node" || {
		grep "job $id" "$GOS_DIR/log/slurmd.log"; false; }
	# gpuoversubctl report: this node's figures.
	run ctl report "$id"
	echo "$output"
	[[ "$output" == *" on node $(hostname -s), GPU 0 (0000:17:00.0)"* ]]
}

# Issue 31, finding 7: gpuoversubctl report took the job-wide view from the
# whole `scontrol -o show job` line, where the first marker anywhere won: a
# job named gpuoversub={...} showed root a view its owner forged, and a
# field of the wrong type made ctl exit 1.
@test "the job-wide view is AdminComment's alone: a job's name cannot forge it, and a field of the wrong type is said" {
	local forged='gpuoversub={"gos":2,"nodes":["forged"],"runs":9,"missing":[],"parts":[{"node":"forged","run":0,"gpus":[]}]}'
	id=$(submit --hold -J "$forged" --gres=shard:1 --gpu-mem-oversub "$(job_script f 1 0)")
	scontrol update job "$id" AdminComment='gpuoversub={"gos":2,"runs":"many","parts":[]}'	# root's, a wrong type
	scontrol release "$id"
	job_completed "$id"
	run ctl report "$id"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *" on node $(hostname -s), GPU 0 (0000:17:00.0)"* ]]
	[[ "$output" != *forged* ]]
	[[ "$output" == *"job-wide (AdminComment, from slurmctld): not a record this version reads"* ]]
}

@test "with the daemon down, passthrough runs jobs unmanaged and fail fails them" {
	gos_daemon_stop
	plugstack on_daemon_down=passthrough
	id=$(submit --gres=shard:1 --gpu-mem-oversub --wrap 'echo "PRELOAD=$LD_PRELOAD"')
	job_completed "$id"
	grep -qx "PRELOAD=" "$GOS_DIR/out-$id.txt"
	plugstack on_daemon_down=fail
	id=$(submit --gres=shard:1 --gpu-mem-oversub --wrap 'echo ran')
	[ "$(job_wait "$id")" = FAILED ]
	! grep -q ran "$GOS_DIR/out-$id.txt"
	grep -q "gpuoversubd is not reachable" "$GOS_DIR/out-$id.txt"	# the user is told
	[ "$(sinfo -h -o %T)" = idle ]	# and the node is not drained
	gos_daemon_start
}

@test "bad plugstack arguments are reported by name" {
	plugstack bogus=1 mpi_hooks=sometimes
	run submit --gres=shard:1 --gpu-mem-oversub --wrap true
	[[ "$output" == *"unknown plugstack argument 'bogus'"* ]]
	[[ "$output" == *"'mpi_hooks=sometimes': expected auto, always or never"* ]]
}

@test "scancel in the middle still yields a report and leaves no stale tenant" {
	id=$(submit --gres=shard:1 --gpu-mem-oversub "$(job_script c 3 60)")
	wait_until 30 demand_is $((96 << 20))	# all three buffers held
	scancel "$id"
	[ "$(job_wait "$id")" = CANCELLED ]
	wait_until 20 test -f "$GOS_DIR/reports/job-$id.json"
	! tenant "$id"
	! listed "$id"
}

# Whether `explain` of job $1 gives the weight `status` shows, nominal weight
# $2 and shards reason $3.
explain_matches() {
	ctl --json status >"$GOS_DIR/status.json" && ctl --json explain "$1" >"$GOS_DIR/explain.json" || return 1
	python3 - "$GOS_DIR/status.json" "$GOS_DIR/explain.json" "$@" <<'PY'
import json, sys
t = [t for t in json.load(open(sys.argv[1]))["gpus"][0]["tenants"] if t["job"] == int(sys.argv[3])][0]
g = json.load(open(sys.argv[2]))["gpus"][0]
sys.exit(0 if g["weight"] == t["weight"] and g["nominal"] == float(sys.argv[4]) and
	 g["derivation"][0]["why"] == sys.argv[5] else 1)
PY
}

@test "shards weigh: shard:3 and shard:1 jobs end resident 3:1 under pressure, within one chunk each" {
	# 2M chunks (the harness's policy): one chunk is the tolerance.
	a=$(submit --gres=shard:3 --gpu-mem-oversub "$(job_script shard3 8 30)")	# 256 MiB each, 512 of 256
	b=$(submit --gres=shard:1 --gpu-mem-oversub "$(job_script shard1 8 30)")
	wait_until 60 settled "$a" "$b" $((256 << 20))
	ctl explain "$a"	# shown only when the test fails
	# The engine counts weights in hundredths: with the balloon's idle 0.25
	# on both, 0.75:0.25 are 0.19:0.06, a 3.17:1 split (196 and 60 MiB in
	# forky's CI run); the explain below gives the 3:1 itself.
	shares_as_weights "$a" "$b" 2>&3
	# explain says the same as the status (taken again should the balloon
	# change a weight between the two), and why.
	wait_until 10 explain_matches "$a" 0.75 "3 of 4 shards"
	ctl explain "$b" | grep -q "shards    x 0.25     1 of 4 shards"
	scancel "$a" "$b"
	job_wait "$a"; job_wait "$b"
}

# Issue 31, finding 2: a job Slurm suspends has stopped processes, and its
# agent cannot answer. It kept 192 MiB of the 256 MiB GPU for the whole
# suspension, its neighbour 64 of its 128. Now the order to it expires
# (order_timeout, 10 s here), what it named counts as in host RAM (the
# driver's to evict), and the neighbour has its share; the suspended job is
# not killed, and completes with its data intact once resumed.
@test "a suspended job keeps its neighbour off nothing: its order expires, the neighbour gets its share, and it resumes intact" {
	a=$(submit --gres=shard:1 --gpu-mem-oversub "$(job_script suspended 6 20)")	# 192 MiB of 256
	wait_until 30 eval '[ "$(resident_of "$a")" -ge $((192 << 20)) ]'
	scontrol suspend "$a"
	wait_until 10 eval '[ "$(squeue -h -j "$a" -o %T)" = SUSPENDED ]'
	# 128 MiB, held 30 s: its share comes once the order expires, some 10 s
	# after it asks, and it must still be there then.
	b=$(submit --gres=shard:1 --gpu-mem-oversub "$(job_script neighbour 4 30)")
	local t0=$SECONDS
	wait_until 40 eval '[ "$(resident_of "$b")" -ge $((128 << 20)) ]' || { ctl status; false; }
	echo "neighbour at its 128 MiB share $((SECONDS - t0)) s after submission; the suspended job holds $(resident_of "$a") bytes" >&3
	[ "$(resident_of "$a")" -le $((128 << 20)) ]
	# Said at the watch's next usage period, which may come after the
	# neighbour's memory has (the sanitizer build's CI run grepped too soon).
	wait_until 10 grep -q "job $a: 1 of its processes let an order on GPU 0 expire unanswered" \
		"$GOS_DIR/log/gpuoversubd.log" || { grep "job $a" "$GOS_DIR/log/gpuoversubd.log"; false; }
	[ "$(squeue -h -j "$a" -o %T)" = SUSPENDED ]
	scontrol resume "$a"
	job_completed "$a"
	job_completed "$b"
	grep "job $a" "$GOS_DIR/log/gpuoversubd.log"	# shown only when the test fails
	[ "$(grep -c "job $a: killed" "$GOS_DIR/log/gpuoversubd.log")" -eq 0 ]
	[ "$(grep -c '^ok' "$GOS_DIR/out-$a.txt")" -eq 13 ]
	[ "$(grep -c '^ok' "$GOS_DIR/out-$b.txt")" -eq 9 ]
}

# The end_reason in job $1's report.
end_reason() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("end_reason", ""))' "$GOS_DIR/reports/job-$1.json"; }
# ended_as JOB REASON: whether JOB's report says REASON; when not, what it
# says and the daemon's lines of the job.
ended_as() {
	local reason
	reason=$(end_reason "$1")
	[ "$reason" = "$2" ] && return 0
	echo "job $1's end reason: '$reason', not '$2'; the daemon's lines of it:"
	grep "job $1" "$GOS_DIR/log/gpuoversubd.log"
	return 1
}

@test "the reconciler ends a job Slurm has ended or never knew, though a task of it lives on" {
	cp "$GOS_DIR/gpuoversub.yaml" "$GOS_DIR/gpuoversub.yaml.orig"
	printf 'reconcile: {period: 1s, grace: 2s}\nslurm_weights: {refresh: 500ms}\n' >>"$GOS_DIR/gpuoversub.yaml"
	gos_daemon_stop
	gos_daemon_start
	reg() { "$GOS_BUILD/tests/tools/gos_register" "${GOS_SOCK%.sock}.root.sock" "$@"; }
	# Tasks the node side sees alive: alone, it would keep both jobs.
	sleep 600 3>&- &
	echo $! >"$GOS_DIR/alive.pid"
	alive=$!

	# A registration for a job slurmctld does not know (purged, or never there).
	reg step 4000000 0
	reg task 4000000 "$alive"
	wait_until 30 test -f "$GOS_DIR/reports/job-4000000.json"
	ended_as 4000000 "reaped: Slurm: job 4000000 is unknown to slurmctld"

	# A real job whose step and job end are lost: the daemon is stopped while
	# the job ends, and the plugin gives up on it.
	release=$GOS_DIR/release-$BATS_TEST_NUMBER
	id=$(submit --gres=shard:1 --gpu-mem-oversub --wrap "timeout 60 sh -c 'until [ -e $release ]; do sleep 0.1; done'")
	wait_until 30 listed "$id"
	reg step "$id.7" 0
	reg task "$id.7" "$alive"
	pid=$(cat "$GOS_DIR/run/gpuoversubd.pid")
	kill -STOP "$pid"
	touch "$release"
	state=$(job_wait "$id")
	# Resumed only once the epilog has given up on its job end and report
	# (5 s each): a request still waited for is served on resumption, and
	# would end the job before the reconciler (it did so once under load).
	wait_until 60 grep -q "\[gpuoversub\] job $id: no eviction report" "$GOS_DIR/log/slurmd.log" ||
		{ kill -CONT "$pid"; grep "job $id" "$GOS_DIR/log/slurmd.log"; false; }
	kill -CONT "$pid"
	[ "$state" = COMPLETED ]
	wait_until 30 test -f "$GOS_DIR/reports/job-$id.json"
	ended_as "$id" "reaped: Slurm: job $id is COMPLETED"
	grep -q "job $id reaped: Slurm: job $id is COMPLETED" "$GOS_DIR/log/gpuoversubd.log"
	! listed "$id"
	kill -0 "$alive"	# the task lived on all along

	kill "$alive"
	rm "$GOS_DIR/alive.pid"
	mv "$GOS_DIR/gpuoversub.yaml.orig" "$GOS_DIR/gpuoversub.yaml"
	gos_daemon_stop
	gos_daemon_start
}

@test "a site without accounting is told so, not shown slurmdbd's empty error" {
	run "$GOS_BUILD/libexec/gpuoversub/gpuoversub-slurm-facts"
	[ "$status" -eq 0 ]
	no_accounting="this site keeps no Slurm accounting (AccountingStorageType=accounting_storage/none), so no QOS has a Priority"
	[[ $output == *"unavailable qos $no_accounting"* ]]
	[[ $output != *"No error"* ]]
	id=$(submit --gres=shard:1 --gpu-mem-oversub --wrap "sleep 30")
	explained() { ctl explain "$id" | grep -F "(none): Slurm's QOS Priority unknown: $no_accounting"; }
	wait_until 30 explained || { ctl explain "$id"; scancel "$id"; false; }
	scancel "$id"
}
