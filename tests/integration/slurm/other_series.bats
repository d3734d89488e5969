#!/usr/bin/env bats
# The SPANK plugin loaded by a Slurm of another release series than the one
# it was built for: a build that says Slurm 21.08 (spank/spank.mk), or the
# plugin GOS_OTHER_SERIES_PLUGIN names (one built on another release),
# listed as "required" in the plugstack. Slurm's loader would refuse it, and
# then slurmd would not start. The plugin says in slurmd's log what to
# install, jobs run as if it were absent, and the node is not drained.
# Needs root.

load ../wait

setup_file() {
	export BUILD=${BUILD:-build}
	source tests/integration/slurm/harness.bash
	export GOS_SLURM_PORT=${GOS_SLURM_PORT:-$(slurm_free_port)}
	local other=${GOS_OTHER_SERIES_PLUGIN:-$GOS_BUILD/tests/spank-other-series/spank_gpuoversub.so}
	[ -f "$other" ] || { echo "no $other: make check-build builds it" >&2; return 1; }
	dir=$(mktemp -d /tmp/gos-series-XXXXXX)
	cp "$other" "$dir/spank_gpuoversub-other.so"
	# The harness's plugstack, with the other series' plugin in it.
	plugstack() {
		echo "required $GOS_DIR/spank_gpuoversub-other.so socket=$GOS_SOCK agent=$GOS_BUILD/lib/libgpuoversub.so config=$GOS_DIR/gpuoversub.yaml $*" \
			>"$GOS_DIR/etc/plugstack.conf"
	}
	slurm_up "$dir" 3>&- || { slurm_down; return 1; }
	# A submit host whose plugin is this Slurm's: its own slurm.conf, the
	# same but for the plugstack.
	mkdir -p "$GOS_DIR/submit"
	sed "s|^PlugStackConfig=.*|PlugStackConfig=$GOS_DIR/submit/plugstack.conf|" "$SLURM_CONF" >"$GOS_DIR/submit/slurm.conf"
	echo "required $GOS_BUILD/lib/spank_gpuoversub.so socket=$GOS_SOCK agent=$GOS_BUILD/lib/libgpuoversub.so config=$GOS_DIR/gpuoversub.yaml" \
		>"$GOS_DIR/submit/plugstack.conf"
	slurm_job_env
}

teardown_file() {
	source tests/integration/slurm/harness.bash
	slurm_teardown
}

setup() {
	source tests/integration/slurm/harness.bash
	# This Slurm's series, as slurmd names its version ("slurm-wlm 22.05.8").
	series=$(slurmd -V | sed -n 's/.* \([0-9]*\.[0-9]*\)\.[0-9].*/\1/p')
	# The other plugin's, as it names it.
	built=$(strings "$GOS_DIR/spank_gpuoversub-other.so" | sed -n 's/^spank_gpuoversub: built for Slurm \([0-9.]*\)$/\1/p' | head -1)
	[ -n "$series" ] && [ -n "$built" ] && [ "$built" != "$series" ] ||
		{ echo "this Slurm: '$series' ($(slurmd -V)); the other plugin's: '$built'"; false; }
	refusal="spank_gpuoversub: built for Slurm $built, loaded by Slurm $series: install the slurm-spank-gpuoversub package built for Slurm $series"
}

submit() { sbatch --parsable -o "$GOS_DIR/out-%j.txt" "$@"; }
listed() { "$GOS_BUILD/bin/gpuoversubctl" --socket "$GOS_SOCK" --json jobs | python3 -c 'import json,sys; sys.exit(0 if any(j["job"] == int(sys.argv[1]) for j in json.load(sys.stdin)) else 1)' "$1"; }
# The node serves jobs: idle, with no reason (not drained, not down).
node_idle() { [ "$(sinfo -h -o '%T %E')" = "idle none" ]; }
log_has() { grep -F -- "$1" "$GOS_DIR/log/slurmd.log"; }
show_logs() { tail -n 40 "$GOS_DIR/log/slurmd.log" "$GOS_DIR/log/slurmctld.log"; sinfo -h -o '%T %E'; }

@test "the plugin names the series it was built for" {
	run strings "$GOS_BUILD/lib/spank_gpuoversub.so"
	[[ "$output" == *"spank_gpuoversub: built for Slurm $series"* ]]
	[ -n "${GOS_OTHER_SERIES_PLUGIN:-}" ] || [ "$built" = 21.08 ]
}

@test "slurmd starts with it, says in its log what to install, and the node is idle" {
	log_has "$refusal" || { show_logs; false; }
	log_has "gpuoversub is off on this node: its jobs run without it"
	node_idle || { show_logs; false; }
}

@test "a job without the option runs as if the plugin were absent, and slurmstepd says so" {
	id=$(submit --gres=shard:1 --wrap 'echo "PRELOAD=$LD_PRELOAD"')
	[ "$(job_wait "$id")" = COMPLETED ] || { show_logs; false; }
	cat "$GOS_DIR/out-$id.txt"
	grep -qx "PRELOAD=" "$GOS_DIR/out-$id.txt"
	log_has "[$id.batch] error: $refusal" || { show_logs; false; }
	grep -F "[$id.batch]" "$GOS_DIR/log/slurmd.log" | grep -qF "gpuoversub is off for this job, which runs without it"
	! listed "$id"
	wait_until 30 node_idle || { show_logs; false; }
}

@test "a job that asks for --gpu-mem-oversub from a sound submit host runs without gpuoversub" {
	id=$(SLURM_CONF=$GOS_DIR/submit/slurm.conf submit --gres=shard:1 --gpu-mem-oversub=2 --wrap 'echo "PRELOAD=$LD_PRELOAD"')
	[ "$(job_wait "$id")" = COMPLETED ] || { show_logs; false; }
	cat "$GOS_DIR/out-$id.txt"
	grep -qx "PRELOAD=" "$GOS_DIR/out-$id.txt"
	grep -F "[$id.batch]" "$GOS_DIR/log/slurmd.log" | grep -qF "$refusal"
	! listed "$id"
	wait_until 30 node_idle || { show_logs; false; }
}

@test "on a submit host of another series, --gpu-mem-oversub is refused with the reason; the environment's is not checked" {
	run submit --gres=shard:1 --gpu-mem-oversub=2 --wrap true
	[ "$status" -ne 0 ]
	[[ "$output" == *"$refusal"*"--gpu-mem-oversub is refused: submit without it to run the job without gpuoversub"* ]]
	run env SLURM_GPU_MEM_OVERSUB=2 sbatch --parsable -o "$GOS_DIR/out-%j.txt" --gres=shard:1 --wrap 'echo "PRELOAD=$LD_PRELOAD"'
	[ "$status" -eq 0 ]
	[[ "$output" == *"$refusal"*"SLURM_GPU_MEM_OVERSUB is not checked here"* ]]
	id=${lines[-1]}
	[ "$(job_wait "$id")" = COMPLETED ] || { show_logs; false; }
	grep -qx "PRELOAD=" "$GOS_DIR/out-$id.txt"
	! listed "$id"
	wait_until 30 node_idle || { show_logs; false; }
}
