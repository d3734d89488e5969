#!/usr/bin/env bats
# gpuoversub-slurm-facts under slurm.conf's PrivateData, run by a user
# other than root or SlurmUser (a daemon of its own user): slurmctld hides
# other users' jobs, partitions and associations from it without a word,
# a hidden job answering "Invalid job id" as a purged one does. The reader
# must say those kinds are unavailable, never read them in part: a job
# read as unknown would be ended on the node. Needs root.

load ../wait

setup_file() {
	export BUILD=${BUILD:-build}
	source tests/integration/slurm/harness.bash
	export GOS_SLURM_PORT=$(slurm_free_port)
	export GOS_SLURM_CONF_EXTRA="PrivateData=jobs,partitions,usage"
	dir=$(mktemp -d /tmp/gos-private-XXXXXX)
	slurm_up "$dir" 3>&- || { slurm_down; return 1; }
	export GOS_DIR SLURM_CONF
}

teardown_file() {
	source tests/integration/slurm/harness.bash
	slurm_teardown
}

facts() { "${BUILD}/libexec/gpuoversub/gpuoversub-slurm-facts" "$@"; }
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups env SLURM_CONF="$SLURM_CONF" "$@"; }

@test "as another user, what PrivateData hides is unavailable by name, and a hidden job is never read as unknown" {
	id=$(sbatch --parsable -o /dev/null --wrap "sleep 120")
	wait_until 30 bash -c "squeue -h -j $id -o %T | grep -qx RUNNING"
	# What makes it matter: slurmctld shows nobody no such job at all.
	run as_nobody scontrol show job "$id"
	echo "scontrol as nobody: $output"
	[[ $output != *"JobId=$id "* ]]
	# A copy nobody can run: the checkout may be 0700 (CI's is).
	install -m 0755 "$BUILD/libexec/gpuoversub/gpuoversub-slurm-facts" "$GOS_DIR/facts"
	run as_nobody "$GOS_DIR/facts" --fairshare --jobs "$id"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"unavailable jobs PrivateData=jobs in slurm.conf hides other users' jobs from uid 65534 (nobody); run gpuoversubd as root or SlurmUser, or take jobs out of PrivateData"* ]]
	[[ $output == *"unavailable partitions PrivateData=partitions in slurm.conf hides other users' partitions"* ]]
	[[ $output == *"unavailable fairshare PrivateData=usage,users,accounts in slurm.conf hides other users' associations"* ]]
	[[ $output != *"job $id unknown"* ]]
	[[ $output != *"partition "* ]]
	# Root reads them all.
	run facts --jobs "$id"
	echo "$output"
	[[ $output == *"job $id running RUNNING"* ]]
	[[ $output == *"partition debug "* ]]
	scancel "$id"
}
