#!/usr/bin/env bats
# Finding 1 of issue 13: no user acts for another's job. A process belongs
# to a job only through what root or Slurm set: a registered task (its pid
# and start time) or Slurm's own job cgroup; and only as the job's user.

load ../wait
load ../daemon/daemon
load hostile

setup() {
	REG=${BUILD:-build}/tests/tools/gos_register
	CTL=${BUILD:-build}/bin/gpuoversubctl
	CG=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	MADE_CGROUPS=()
	neighbours_up
	AGENT=$(for_neighbours "$BATS_TEST_DIRNAME/gos_agent.py" include/gpuoversub/abi.h)
}

teardown() {
	local cg
	neighbours_down
	[ -n "${PID:-}" ] && daemon_down
	for cg in "${MADE_CGROUPS[@]}"; do
		[ -d "$cg" ] && find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	true
}

# The number of registered tasks of job $1.
tasks_of() {
	"$CTL" --socket "$D/s.sock" --json jobs |
		/usr/bin/python3 -c 'import json,sys; print(next(j["tasks"] for j in json.load(sys.stdin) if j["job"] == int(sys.argv[1])))' "$1"
}
# Whether job $1 has $2 registered tasks (asked anew each time wait_until tries).
has_tasks() { [ "$(tasks_of "$1")" = "$2" ]; }

# A cgroup v2 directory of the test's own, removed in teardown.
cgroup_dir() {
	[ -n "$CG" ] && [ -w "$CG/cgroup.procs" ] || skip "no writable cgroup v2 hierarchy"
	mkdir -p "$CG$1"
	MADE_CGROUPS+=("$CG/$(cut -d/ -f2 <<<"$1")")
}

# Neighbour $2 runs the agent, registered by root as a task of job $1 before it says hello.
hello_as_task_of() {
	rm -f "$D/go" && mkfifo "$D/go"
	as_neighbour "$2" /usr/bin/python3 "$AGENT" "$D/s.sock" hello --wait <"$D/go" >"$D/out.$1" 2>&1 &
	local task=$!
	"$REG" "$D/s.sock" task "$1" "$task"
	echo go >"$D/go"
	wait "$task" || true
	cat "$D/out.$1"
}

@test "a recycled task pid is another process: hello and STATS refuse it" {
	daemon_up
	"$REG" "$D/s.sock" step 101 0 0 "$(neighbour_uid 2)"
	"$REG" "$D/s.sock" exec 101 setpriv --reuid=gos-nb2 --regid=gos-nb2 --clear-groups sleep 600 &
	victim=$!
	# The registration includes a synced save to the state directory, which a
	# busy disk can hold for long (30 s was too little beside a build);
	# gos_register itself waits 120 s for it.
	wait_until 120 has_tasks 101 1 || {
		"$CTL" --socket "$D/s.sock" --json jobs
		ps -o pid,user,lstart,cmd -p "$victim"
		cat "$D/log"
		false
	}
	kill "$victim"
	wait "$victim" || true
	# A neighbour's process now holds exactly the victim's pid.
	run /usr/bin/python3 "$AGENT" "$D/s.sock" at-pid "$victim" gos-nb1 hello
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"hello -1 process $victim is not a task of any job registered"* ]]
	[[ "$output" == *"stats: the daemon closed the connection"* ]]	# after a refused hello
	[ "$(tasks_of 101)" = 0 ]	# the exited task is forgotten
}

@test "a job_N cgroup a user made in a delegated subtree is not job N" {
	cgroup_dir "/gos-delegated-$$"
	chown gos-nb1: "$CG/gos-delegated-$$" "$CG/gos-delegated-$$"/cgroup.{procs,threads,subtree_control}
	daemon_up
	"$REG" "$D/s.sock" step 101 0 0 "$(neighbour_uid 2)"
	run sh -c 'echo $$ >"$1/cgroup.procs" && exec setpriv --reuid=gos-nb1 --regid=gos-nb1 --clear-groups \
		/usr/bin/python3 "$2" "$3" hello --cgroup "$1/job_101"' sh "$CG/gos-delegated-$$" "$AGENT" "$D/s.sock"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"hello -1 process "*" is not a task of any job registered"* ]]
	[[ "$output" == *"stats: the daemon closed the connection"* ]]	# after a refused hello
}

@test "Slurm's own job cgroup, root's, under slurm_cgroup ties a process to its job" {
	cgroup_dir "/gos-slurm-$$/job_105"
	daemon_up "slurm_cgroup: /gos-slurm-$$"
	"$REG" "$D/s.sock" step 105 0 0 "$(neighbour_uid 1)"
	run sh -c 'echo $$ >"$1/cgroup.procs" && exec setpriv --reuid=gos-nb1 --regid=gos-nb1 --clear-groups \
		/usr/bin/python3 "$2" "$3" hello' sh "$CG/gos-slurm-$$/job_105" "$AGENT" "$D/s.sock"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"hello 0 "* ]]
	[[ "$output" == *"stats 0 "* ]]
}

# Slurm 26.05 names the job's cgroup by its SLUID (CgroupJobIdPaths=no):
# the name says no job, so the cgroup is the job's whose task slurmstepd
# registered in it; a SLUID cgroup with no such task is nobody's.
@test "Slurm 26.05's SLUID job cgroup ties a process to the job whose task was registered in it" {
	cgroup_dir "/gos-slurm-$$/sEKNKTV3WPV500"
	cgroup_dir "/gos-slurm-$$/sEKNKTV3WPV501"
	daemon_up "slurm_cgroup: /gos-slurm-$$"
	"$REG" "$D/s.sock" step 106 0 0 "$(neighbour_uid 1)"
	hello_in() {
		sh -c 'echo $$ >"$1/cgroup.procs" && exec setpriv --reuid=gos-nb1 --regid=gos-nb1 --clear-groups \
			/usr/bin/python3 "$2" "$3" hello' sh "$CG/gos-slurm-$$/$1" "$AGENT" "$D/s.sock"
	}
	run hello_in sEKNKTV3WPV500	# no task registered in it yet
	echo "$output"
	[[ "$output" == *"hello -1 process "*" is not a task of any job registered"* ]]
	sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" "$3" exec 106 setpriv --reuid=gos-nb1 --regid=gos-nb1 --clear-groups sleep 600' \
		sh "$CG/gos-slurm-$$/sEKNKTV3WPV500" "$REG" "$D/s.sock" &
	task=$!
	wait_until 120 has_tasks 106 1 || { cat "$D/log"; kill "$task"; false; }
	run hello_in sEKNKTV3WPV500	# not the task's descendant: its cgroup's
	echo "$output"
	[[ "$output" == *"hello 0 "* ]] && [[ "$output" == *"stats 0 "* ]] || { kill "$task"; false; }
	run hello_in sEKNKTV3WPV501	# another job's SLUID, with no task of 106
	echo "$output"
	kill "$task"
	[[ "$output" == *"hello -1 process "*" is not a task of any job registered"* ]]
}

@test "hello refuses a task that does not run as its job's user" {
	daemon_up
	"$REG" "$D/s.sock" step 102 0 0 "$(neighbour_uid 2)"
	"$REG" "$D/s.sock" step 103 0 0 "$(neighbour_uid 1)"
	run hello_as_task_of 102 1
	echo "$output"
	[[ "$output" == *"hello -1 process "*" runs as uid $(neighbour_uid 1), but job 102 is uid $(neighbour_uid 2)'s"* ]]
	[[ "$output" == *"stats: the daemon closed the connection"* ]]	# after a refused hello
	run hello_as_task_of 103 1	# the same, for the neighbour's own job
	echo "$output"
	[[ "$output" == *"hello 0 "* ]]
	[[ "$output" == *"stats 0 "* ]]
}

@test "a task pid outside 2..pid_max-1 is refused, not stored" {
	daemon_up
	"$REG" "$D/s.sock" step 101 0
	max=$(cat /proc/sys/kernel/pid_max)
	for pid in 4294967295 "$max" 1; do
		run "$REG" "$D/s.sock" task 101 "$pid"
		[ "$status" -eq 1 ]
		[[ "$output" == *"pid $pid cannot be a task: pids run from 2 to $((max - 1)) (below kernel.pid_max)"* ]]
	done
	[ "$(tasks_of 101)" = 0 ]
}

@test "a step's tasks are forgotten when it ends" {
	daemon_up
	"$REG" "$D/s.sock" step 110.0 0
	"$REG" "$D/s.sock" step 110.1 0
	as_neighbour 1 sleep 600 &
	"$REG" "$D/s.sock" task 110.1 $!
	[ "$(tasks_of 110)" = 1 ]
	"$REG" "$D/s.sock" end 110.1
	[ "$(tasks_of 110)" = 0 ]
}

@test "a job's buffers are capped by max_buffers_per_job" {
	daemon_up "max_buffers_per_job: 3"
	"$REG" "$D/s.sock" step 7 0
	run "$REG" "$D/s.sock" exec 7 /usr/bin/python3 "$AGENT" "$D/s.sock" alloc 4
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"alloc 2 0 "* ]]
	[[ "$output" == *"alloc 3 -105 job 7 holds the most buffers on its GPU 0 that max_buffers_per_job (3) allows"* ]]
	[[ "$output" == *"again 0 "* ]]	# a freed buffer makes room
}
