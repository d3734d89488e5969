#!/bin/bash
# In the guest of tests/service/run.sh, started by gos-guest.service once
# systemd has booted: gpuoversubd as the installed unit runs it, checked
# through systemctl and the journal. One TAP line per check, with its
# seconds, on the console; "GOS: done" at the end, then power off.
set -u
export PATH=/opt/gos:/usr/sbin:/usr/bin:/sbin:/bin
sock=/run/gpuoversub/gpuoversubd.sock
policy=/etc/gpuoversub/gpuoversub.yaml
n=0 failed=0

# check NAME CMD...: a TAP line for CMD, its output as comments on failure.
check() {
	local name=$1 start out rc
	shift
	n=$((n + 1))
	start=$(date +%s%N)
	# In this shell, not a subshell: the test program's descriptors stay.
	"$@" >/tmp/check.out 2>&1
	rc=$?
	out=$(cat /tmp/check.out)
	local took=$((($(date +%s%N) - start) / 1000000))
	if [ $rc -eq 0 ]; then
		echo "ok $n - $name ($((took / 1000)).$(printf %03d $((took % 1000))) s)"
		sed -n 's/^figure: /#   /p' /tmp/check.out	# what it measured
	else
		echo "not ok $n - $name"
		failed=$((failed + 1))
		printf '%s\n' "$out" | sed 's/^/#   /'
		journalctl -u gpuoversubd --no-pager -n 12 -o short-monotonic | sed 's/^/#   journal: /'
	fi
}

source /opt/gos/wait.bash	# wait_until SECONDS CMD...

prop() { systemctl show -P "$1" gpuoversubd; }
has_job() { gpuoversubctl --json jobs | grep -q "\"job\": *$1\b"; }
# serving_one_job SECONDS: the unit's status says one job and its agent
# within SECONDS; what it says instead on failure.
serving_one_job() {
	wait_until "$1" bash -c '[[ $(systemctl show -P StatusText gpuoversubd) == "serving 1 job and 1 agent on 2 GPUs" ]]' ||
		{ echo "status: '$(prop StatusText)'"; return 1; }
}

# app_start JOB: the test program of JOB (user gosuser's) on the fake CUDA
# driver, on fds 5 and 6; registered as the SPANK plugin does, step first,
# then the task before it runs the program.
app_start() {
	local job=$1
	gos_register $sock step "$job.0" 0 0 4242 || return 1
	rm -f /tmp/app.in /tmp/app.out
	mkfifo /tmp/app.in /tmp/app.out
	LD_PRELOAD=/opt/gos/libgpuoversub.so LD_LIBRARY_PATH=/opt/gos/fakecuda FAKECUDA_MEMORY=64M \
		FAKECUDA_STATE=/tmp/fakecuda.state GPUOVERSUB_SOCKET=$sock GPUOVERSUB_CONTEXT_BYTES=0 \
		bash -c 'gos_register $0 task $1.0 $$ && exec setpriv --reuid=4242 --regid=4242 --clear-groups /opt/gos/gos_testapp' $sock "$job" </tmp/app.in >/tmp/app.out 2>/tmp/app.err &
	exec 5>/tmp/app.in 6</tmp/app.out
	read -r -t 60 ready <&6
	[ "$ready" = ready ] || { echo "the test program did not start: '$ready'"; cat /tmp/app.err; return 1; }
}
ask() {
	echo "$1" >&5
	local answer
	read -r -t 60 answer <&6 || answer="(no answer)"
	[ "$answer" = "${2:-ok}" ] || { echo "asked '$1', answered '$answer'"; return 1; }
}

# Installed from the .debs (run.sh, GOS_SERVICE_DEBS): their postinst
# enabled the unit, so systemd started it at boot; it is stopped for the
# checks that follow, which start it themselves.
the_package_started_it_at_boot() {
	[ "$(systemctl is-enabled gpuoversubd)" = enabled ] || { echo "the unit is $(systemctl is-enabled gpuoversubd)"; return 1; }
	wait_until 30 bash -c '[ "$(systemctl show -P ActiveState gpuoversubd)" = active ]' || return 1
	gpuoversubctl status >/dev/null && systemctl stop gpuoversubd
}

ready_means_ready() {
	systemctl start gpuoversubd || return 1
	# At once: start returned on READY=1, which comes after the sockets listen.
	gpuoversubctl status >/dev/null || return 1
	[ "$(prop ActiveState)" = active ] && [[ $(prop StatusText) == "serving 0 jobs and 0 agents on 2 GPUs" ]] ||
		{ echo "state $(prop ActiveState), status '$(prop StatusText)'"; return 1; }
}

# Its own user (sysusers.d), with CAP_KILL (bit 5) and CAP_NET_BIND_SERVICE
# (bit 10) alone, effective and in
# its bounding set, and no longer ambient (its children do not inherit
# it); its directories handed to it by systemd.
it_runs_as_its_own_user_with_one_capability() {
	local pid
	pid=$(prop MainPID)
	[ "$(stat -c %U /proc/"$pid")" = gpuoversub ] || { ps -o user,pid,cmd -p "$pid"; return 1; }
	grep -E '^Cap(Eff|Bnd|Amb):' /proc/"$pid"/status
	[ "$(grep -cE '^Cap(Eff|Bnd):\s+0000000000000420$' /proc/"$pid"/status)" -eq 2 ] || return 1
	grep -qE '^CapAmb:\s+0000000000000000$' /proc/"$pid"/status || return 1
	stat -c '%U %n' /var/lib/gpuoversub /var/log/gpuoversub/reports /run/gpuoversub
	[ "$(stat -c %U /var/lib/gpuoversub /var/log/gpuoversub/reports /run/gpuoversub | sort -u)" = gpuoversub ]
}

a_job_allocates() {
	app_start 42 && ask "alloc x 40" && has_job 42 || return 1
	serving_one_job 5
}

reload_applies() {
	systemctl reload gpuoversubd && [ "$(prop ActiveState)" = active ] &&
		journalctl -u gpuoversubd -o cat --no-pager | grep -q "reload: policy $policy applied"
}

restart_keeps_the_job() {
	local before
	before=$(prop MainPID)
	systemctl restart gpuoversubd && [ "$(prop MainPID)" != "$before" ] && has_job 42 && ask "verify x"
}

killed_it_comes_back() {
	local before restarts
	before=$(prop MainPID) restarts=$(prop NRestarts)
	systemctl kill -s KILL gpuoversubd
	wait_until 20 bash -c "[ \$(systemctl show -P NRestarts gpuoversubd) -gt $restarts ] &&
		[ \$(systemctl show -P ActiveState gpuoversubd) = active ]" && [ "$(prop MainPID)" != "$before" ] &&
		has_job 42 && ask "verify x"
}

# A stopped loop pings no more: with a 2 s watchdog, systemd aborts the
# daemon and starts it again.
the_watchdog_restarts_a_hung_loop() {
	mkdir -p /run/systemd/system/gpuoversubd.service.d
	printf '[Service]\nWatchdogSec=2s\nTimeoutAbortSec=2s\n' >/run/systemd/system/gpuoversubd.service.d/watchdog.conf
	systemctl daemon-reload && systemctl restart gpuoversubd || return 1
	local before since
	before=$(prop MainPID) since=$(date '+%Y-%m-%d %H:%M:%S')
	systemctl kill -s STOP gpuoversubd
	wait_until 30 bash -c "journalctl -u gpuoversubd --since '$since' -o cat --no-pager | grep -q 'Watchdog timeout' &&
		[ \$(systemctl show -P ActiveState gpuoversubd) = active ] && [ \$(systemctl show -P MainPID gpuoversubd) != $before ]"
	local rc=$?
	rm -r /run/systemd/system/gpuoversubd.service.d
	systemctl daemon-reload
	[ $rc -eq 0 ] && wait_until 10 has_job 42
}

# The next version's packages (run.sh, GOS_SERVICE_NEXT_DEBS) installed
# by apt under the running job: their postinst (dh_installsystemd's)
# restarts the unit, and the job, its agent and its data stay.
the_upgrade_restarts_it_under_a_running_job() {
	local before next p
	before=$(prop MainPID)
	next=$(dpkg-deb -f "$(ls /opt/gos/next/gpuoversub_*.deb)" Version)
	mkdir -p /var/cache/apt/archives/partial	# (left out of the guest's image)
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends /opt/gos/next/*.deb || return 1
	for p in gpuoversub libgpuoversub slurm-spank-gpuoversub; do
		[ "$(dpkg-query -W -f '${Version}' $p)" = "$next" ] ||
			{ echo "$p is at $(dpkg-query -W -f '${Version}' $p), not $next"; return 1; }
	done
	[ "$(prop ActiveState)" = active ] && [ "$(prop MainPID)" != "$before" ] ||
		{ echo "state $(prop ActiveState), main pid $(prop MainPID) (before the upgrade $before)"; return 1; }
	has_job 42 && ask "verify x" || return 1
	serving_one_job 10
}

the_journal_has_priorities() {
	journalctl -u gpuoversubd -p notice..notice -o cat --no-pager | grep -q "^gpuoversubd serving $sock" &&
		! journalctl -u gpuoversubd -p warning -o cat --no-pager | grep -q "gpuoversubd serving"
}

the_owner_reads_the_report() {
	echo "free x" >&5
	gos_register $sock end 42.0 || return 1
	wait_until 10 test -f /var/log/gpuoversub/reports/job-42.json || return 1
	runuser -u gosuser -- gpuoversubctl report 42 | grep -q "job 42" || return 1
	! runuser -u nobody -- gpuoversubctl report 42 >/dev/null 2>&1
}

the_textfile_is_written() {
	wait_until 20 grep -q '^gpuoversub_' /var/lib/prometheus/node-exporter/gpuoversub.prom
}

# The sandbox (ProtectSystem=strict) and the daemon's user: a policy that
# moves the reports outside the unit's writable paths is refused by name,
# on reload (the running policy kept) and at start (gpuoversubd --check,
# ExecStartPre): a directory the admin gave the daemon's user, as
# read-only; one it cannot make, as not its own.
refused() {	# SINCE WHY: the reload's and the start's refusal of WHY, both
	local since=$1 why=$2 rc=0
	systemctl reload gpuoversubd
	wait_until 10 bash -c "journalctl -u gpuoversubd --since '$since' -o cat --no-pager |
		grep -qF 'reload: keeping the running policy: $why'" || rc=1
	[ "$(prop ActiveState)" = active ] || rc=1
	systemctl restart gpuoversubd && { echo "restarted with reports outside the sandbox"; rc=1; }
	journalctl -u gpuoversubd --since "$since" -o cat --no-pager | grep -F "gpuoversubd: $policy: $why" || rc=1
	cp /tmp/policy.yaml $policy
	systemctl reset-failed gpuoversubd
	systemctl start gpuoversubd || rc=1
	return $rc
}

the_sandbox_refuses_a_directory_outside_it() {
	local rc=0
	cp $policy /tmp/policy.yaml
	install -d -o gpuoversub -g gpuoversub /srv/gos-reports
	echo 'reports: {dir: /srv/gos-reports}' >>$policy
	refused "$(date '+%Y-%m-%d %H:%M:%S')" "the report directory /srv/gos-reports is on a read-only file system" || rc=1
	echo 'reports: {dir: /srv/gos-other}' >>$policy
	refused "$(date '+%Y-%m-%d %H:%M:%S')" "the report directory /srv/gos-other cannot be made by gpuoversub (at /srv)" || rc=1
	return $rc
}

# The module loaded, the daemon (its own user, without CAP_SYS_ADMIN, under
# the unit's DevicePolicy=closed) drives it through /dev/gpuoversub-control,
# and a job's program allocates through /dev/gpuoversub.
the_daemon_drives_the_module() {
	insmod /opt/gos/gpuoversub.ko || return 1
	# udev hands the control node to the daemon's user (60-gpuoversub.rules).
	wait_until 10 bash -c '[ "$(stat -c "%U %a" /dev/gpuoversub-control 2>/dev/null)" = "gpuoversub 600" ]' ||
		{ ls -l /dev/gpuoversub*; return 1; }
	echo "engine: kernel" >>$policy
	systemctl restart gpuoversubd || return 1
	gpuoversubctl --json status | grep -q '"engine": *"kernel' || { gpuoversubctl status; return 1; }
	app_start 43 && ask "alloc y 8" && has_job 43 &&
		gpuoversubctl --json status | tr -d ' \n' | grep -q '"job":43,'
}

# The Slurm facts reader, run by the sandboxed daemon, reaches slurmctld
# (munge's socket, AF_INET): with the controller down a job is kept and
# the daemon says why; once it is up, the job Slurm does not know is ended.
the_facts_reader_reaches_slurmctld() {
	local since rc=0
	since=$(date '+%Y-%m-%d %H:%M:%S')
	# Slurm resolves names with AI_ADDRCONFIG, which finds no IPv4 without
	# an address other than 127.0.0.1: the one /etc/hosts names the node by.
	ip addr add 127.0.1.1/8 dev lo 2>/dev/null
	gos_register $sock step 44.0 0 0 4242 || return 1
	setpriv --reuid=4242 --regid=4242 --clear-groups sleep 600 &
	gos_register $sock task 44.0 $! || return 1
	wait_until 60 bash -c "journalctl -u gpuoversubd --since '$since' -o cat --no-pager |
		grep -q 'Slurm facts: cannot read jobs (.*); no job is ended on Slurm'" || rc=1
	has_job 44 || { echo "job 44 ended without Slurm's word"; rc=1; }
	systemctl start slurmctld || { journalctl -u slurmctld -u munge --no-pager -n 20; return 1; }
	wait_until 60 bash -c "journalctl -u gpuoversubd --since '$since' -o cat --no-pager | grep -q 'Slurm facts: jobs read again'" || rc=1
	wait_until 30 bash -c '! gpuoversubctl --json jobs | grep -q "\"job\": *44\b"' || rc=1
	journalctl -u gpuoversubd --since "$since" -o cat --no-pager | grep 'job 44'
	if [ $rc -ne 0 ]; then
		systemctl status --no-pager slurmctld munge
		timeout 60 /usr/libexec/gpuoversub/gpuoversub-slurm-facts --jobs 44
	fi
	return $rc
}

# The record helper (gpuoversub-record.socket, Accept=yes): enabled and
# listening from boot where the packages installed it (started here where
# make install did), root's, the daemon's group's, 0660. A connection of
# the daemon's user gets the helper's answer line (no slurmdbd here: a
# failure, in its form); another user's is refused by the socket's mode,
# and one in the daemon's group by the helper (SO_PEERCRED). The answers'
# statuses are SuccessExitStatus=: no instance is left failed.
record_sock=/run/gpuoversub-record.sock
record_request() {	# USER GROUP: one request as the daemon sends it, as USER in GROUP
	setpriv --reuid="$1" --regid="$2" --clear-groups \
		/opt/gos/gos_record_request --connect $record_sock 7 1733140000 </opt/gos/record.txt
}
record_instances() { systemctl list-units --all --plain --no-legend "$@" 'gpuoversub-record@*'; }
the_record_helper_serves_the_daemon_user_only() {
	local out rc=0
	if [ -e /opt/gos/from-packages ]; then
		[ "$(systemctl is-enabled gpuoversub-record.socket)" = enabled ] ||
			{ echo "the socket is $(systemctl is-enabled gpuoversub-record.socket)"; return 1; }
	else
		systemctl start gpuoversub-record.socket || return 1
	fi
	[ "$(systemctl show -P ActiveState gpuoversub-record.socket)" = active ] &&
		[ "$(systemctl show -P Listen gpuoversub-record.socket)" = "$record_sock (Stream)" ] ||
		{ systemctl status --no-pager gpuoversub-record.socket; return 1; }
	[ "$(stat -c '%F %a %U %G' $record_sock)" = "socket 660 root gpuoversub" ] || { ls -l $record_sock; rc=1; }
	out=$(record_request gpuoversub gpuoversub)
	[[ $? -eq 0 && $out =~ ^(written|failed|not\ ended|refused)\  ]] || { echo "gpuoversub was answered '$out'"; rc=1; }
	echo "gpuoversub: $out"
	out=$(record_request gosuser gosuser 2>&1)
	[[ $? -eq 1 && $out == *"cannot reach the record helper at $record_sock: Permission denied" ]] ||
		{ echo "gosuser was answered '$out'"; rc=1; }
	out=$(record_request gosuser gpuoversub)
	[[ $? -eq 0 && $out == "refused uid 4242 is not gpuoversub" ]] ||
		{ echo "gosuser in group gpuoversub was answered '$out'"; rc=1; }
	wait_until 10 bash -c "[ -z \"\$(systemctl list-units --all --plain --no-legend --state=active,activating,deactivating 'gpuoversub-record@*')\" ]" ||
		{ echo "instances still running:"; record_instances; rc=1; }
	[ -z "$(record_instances --state=failed)" ] || { echo "failed instances:"; record_instances --state=failed; rc=1; }
	[ $rc -eq 0 ] || journalctl -u gpuoversub-record.socket -u 'gpuoversub-record@*' --no-pager -n 20 -o short-monotonic
	return $rc
}

# Issue 50, finding 9: 20 idle connections of the daemon's user hold at most
# MaxConnections=8 root helpers, and each goes within its 5 s for a
# request, answered (status 4), so that no instance is left failed.
the_record_helper_bounds_idle_connections() {
	local out open rc=0
	out=$(setpriv --reuid=gpuoversub --regid=gpuoversub --clear-groups /opt/gos/gos_record_request --hold $record_sock 20)
	echo "$out"
	[[ $out == *"all closed after "* ]] || rc=1
	open=$(sed -n 's/^open \([0-9]*\) after 1 s$/\1/p' <<<"$out")
	if [ -z "$open" ] || [ "$open" -gt 8 ]; then
		echo "open after 1 s: '$open', more than MaxConnections=8"
		rc=1
	fi
	wait_until 10 bash -c "[ -z \"\$(systemctl list-units --all --plain --no-legend --state=active,activating,deactivating 'gpuoversub-record@*')\" ]" ||
		{ echo "instances still running:"; record_instances; rc=1; }
	[ -z "$(record_instances --state=failed)" ] || { echo "failed instances:"; record_instances --state=failed; rc=1; }
	[ $rc -eq 0 ] || journalctl -u gpuoversub-record.socket -u 'gpuoversub-record@*' --no-pager -n 20 -o short-monotonic
	return $rc
}

# The guest's Slurm node (run.sh): slurmd under systemd on cgroup v2,
# proctrack/cgroup, task/cgroup and ConstrainDevices, the GPUs as device
# nodes; the daemon's two simulated GPUs are the node's. Jobs A (a whole
# GPU), B (3 shards, and a process that leaves its task's tree) and C (1
# shard) run node-job.sh as gosuser, with --gpu-mem-oversub.
A= B= C=
submit() {	# GRES ARGS...: a job asking for GRES, running node-job.sh ARGS...
	runuser -u gosuser -- sbatch --parsable --gpu-mem-oversub --gres="$1" -o "/tmp/slurm-%j.out" /opt/gos/node-job.sh "${@:2}"
}
state_is() { scontrol show job "$1" | grep -q "JobState=$2 "; }
job_field() { gpuoversubctl --json jobs | jq -c --argjson j "$1" ".[] | select(.job == \$j) | .$2"; }
tenant() { gpuoversubctl --json status | jq -c --argjson j "$1" '[.gpus[].tenants[] | select(.job == $j)][0]'; }
node_idle() { [ "$(sinfo -h -o '%T %E')" = "idle none" ]; }
has_file() { [ -s "$1" ]; }
clients_of() { [ "$(tenant "$1" | jq .clients)" = "$2" ]; }
gpus_of() { [ "$(job_field "$1" gpus)" = "$2" ]; }
slurm_logs() { journalctl -u slurmd -u slurmctld --no-pager -n 30 -o cat; }

the_node_runs_slurmd_on_cgroup_v2() {
	[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || { echo "/sys/fs/cgroup is $(stat -fc %T /sys/fs/cgroup)"; return 1; }
	mknod -m 0666 /dev/nvidia0 c 195 0 && mknod -m 0666 /dev/nvidia1 c 195 1 || return 1
	systemctl start slurmd || { slurm_logs; return 1; }
	wait_until 60 node_idle || { sinfo; slurm_logs; return 1; }
}

# Under the device constraint each job's CUDA_VISIBLE_DEVICES is 0, and
# only its own GPU's node opens; the plugin registers the node's GPU,
# Slurm's number, to which the daemon maps the job's device 0.
each_job_sees_only_its_gpu_which_the_daemon_maps() {
	A=$(submit gpu:1 8) || return 1
	wait_until 60 state_is "$A" RUNNING || { scontrol show job "$A"; slurm_logs; return 1; }
	B=$(submit shard:3 40 detach) && C=$(submit shard:1 40) || return 1
	for j in $A $B $C; do wait_until 60 has_file /tmp/node-job-"$j".env || { squeue; slurm_logs; return 1; }; done
	for j in $A $B $C; do echo "figure: job $j: $(paste -sd' ' /tmp/node-job-"$j".env)"; done
	[ "$(cat /tmp/node-job-"$A".env)" = $'gpus=0 cuda=0\nnvidia0: No such device or address\nnvidia1: Operation not permitted' ] &&
		[ "$(cat /tmp/node-job-"$B".env)" = $'gpus=1 cuda=0\nnvidia0: Operation not permitted\nnvidia1: No such device or address' ] &&
		[ "$(cat /tmp/node-job-"$C".env)" = "$(cat /tmp/node-job-"$B".env)" ] || return 1
	wait_until 30 gpus_of "$A" '[0]' && wait_until 30 gpus_of "$B" '[1]' && wait_until 30 gpus_of "$C" '[1]' ||
		{ gpuoversubctl --json jobs; return 1; }
}

# B's detached process (setsid, a double fork) is no descendant of a
# registered task: it is B's through B's cgroup, a second client of B's.
a_process_that_left_its_task_is_its_jobs() {
	wait_until 30 clients_of "$B" 2 || { tenant "$B"; cat /tmp/node-job-"$B".detached; return 1; }
}

# B's 48 MiB (its task's 40 and its detached process's 8) and C's 40 on
# GPU 1's 64 MiB: each within a chunk of its weight's share, B's 3 shards
# weighing more than C's one.
weighted_shares() {
	gpuoversubctl --json status | jq -e --argjson b "$B" --argjson c "$C" '.gpus[1] as $g
		| [$g.tenants[] | select(.job == $b)][0] as $x | [$g.tenants[] | select(.job == $c)][0] as $y
		| ($x.weight + $y.weight) as $w | $x.weight > $y.weight
		and ([$x, $y] | all((.resident - $g.capacity * .weight / $w) | (if . < 0 then -. else . end) <= 2097152))' >/dev/null
}
two_jobs_on_one_gpu_get_their_weighted_shares() {
	wait_until 90 weighted_shares || { gpuoversubctl status; return 1; }
	gpuoversubctl --json status | jq -r --argjson b "$B" --argjson c "$C" '.gpus[1] as $g | $g.tenants[]
		| select(.job == $b or .job == $c)
		| "figure: job \(.job): weight \(.weight), \(.resident / 1048576) MiB of \($g.capacity / 1048576) on GPU 1, \(.host / 1048576) in host RAM"'
}

# Restarted, the daemon has the running jobs again, each with its Slurm
# cgroup, which the module binds (the engine is the kernel's since
# the_daemon_drives_the_module); B's two clients come back.
a_restart_finds_the_jobs_and_binds_their_cgroups() {
	local since j id
	since=$(date '+%Y-%m-%d %H:%M:%S')
	systemctl restart gpuoversubd || return 1
	gpuoversubctl --json status | jq -e '.engine == "kernel"' >/dev/null || { gpuoversubctl status; return 1; }
	for j in $A $B $C; do
		wait_until 30 has_job "$j" || return 1
		# (Debian's Slurm, built for multiple slurmd, names its scope gosvm_slurmstepd.scope)
		id=$(stat -c %i /sys/fs/cgroup/system.slice/gosvm_slurmstepd.scope/job_"$j")
		[ "$(job_field "$j" cgroup)" = "$id" ] || { echo "job $j: cgroup $(job_field "$j" cgroup), its directory's id $id"; return 1; }
	done
	wait_until 30 clients_of "$B" 2 || { tenant "$B"; return 1; }
	! journalctl -u gpuoversubd --since "$since" -o cat --no-pager | grep "cannot bind"
}

the_jobs_end_intact_and_the_node_stays_up() {
	local j rc=0
	touch /tmp/release-"$A" /tmp/release-"$B" /tmp/release-"$C"
	for j in $A $B $C; do
		wait_until 90 state_is "$j" COMPLETED || { scontrol show job "$j"; cat /tmp/slurm-"$j".out; rc=1; }
		[ "$(grep -c '^ok' /tmp/node-job-"$j".task)" = 3 ] || { echo "job $j:"; cat /tmp/node-job-"$j".task; rc=1; }
		wait_until 30 has_file /var/log/gpuoversub/reports/job-"$j".json || { echo "no report of job $j"; rc=1; }
	done
	[ "$(grep -c '^ok' /tmp/node-job-"$B".detached)" = 3 ] || { cat /tmp/node-job-"$B".detached; rc=1; }
	wait_until 30 node_idle || { sinfo; rc=1; }
	return $rc
}

# apt purges the packages (last: the daemon is gone after it): prerm
# stops the units (the daemon's and the record helper's socket), postrm takes its directories, its user and group, and
# gives the loaded module's control node back to root; nothing of the
# daemon's user runs on.
purge_stops_it_and_leaves_nothing() {
	local pid uid f rc=0
	pid=$(prop MainPID) uid=$(id -u gpuoversub)
	DEBIAN_FRONTEND=noninteractive apt-get purge -y -q gpuoversub libgpuoversub || return 1
	! kill -0 "$pid" 2>/dev/null || { echo "the daemon ($pid) still runs"; rc=1; }
	[ -z "$(ps -o pid= -u "$uid")" ] || { echo "uid $uid still runs:"; ps -o pid,cmd -u "$uid"; rc=1; }
	for u in gpuoversubd.service gpuoversub-record.socket; do
		[ "$(systemctl show -P LoadState $u)" = not-found ] || { echo "$u is $(systemctl show -P LoadState $u)"; rc=1; }
	done
	for f in /etc/gpuoversub /var/lib/gpuoversub /var/log/gpuoversub /run/gpuoversub /usr/sbin/gpuoversubd \
		/usr/lib/libgpuoversub.so /etc/systemd/system/multi-user.target.wants/gpuoversubd.service \
		/etc/systemd/system/sockets.target.wants/gpuoversub-record.socket $record_sock \
		{/lib,/usr/lib}/systemd/system/{gpuoversubd.service,gpuoversub-record.socket,gpuoversub-record@.service}; do
		[ ! -e "$f" ] && [ ! -L "$f" ] || { echo "left behind: $f"; rc=1; }
	done
	! getent passwd gpuoversub && ! getent group gpuoversub || { echo "the user or group is left"; rc=1; }
	[ "$(stat -c %U /dev/gpuoversub-control)" = root ] || { ls -l /dev/gpuoversub-control; rc=1; }
	return $rc
}

echo "GOS: booted: $(systemctl is-system-running) ($(cut -d' ' -f1 /proc/uptime) s)"
[ ! -e /opt/gos/from-packages ] ||
	check "the packages' postinst enabled the unit, and systemd started it at boot" the_package_started_it_at_boot
check "systemctl start returns once the socket answers, with STATUS=" ready_means_ready
check "it runs as its own user, with CAP_KILL and CAP_NET_BIND_SERVICE alone" it_runs_as_its_own_user_with_one_capability
check "a registration and an agent's allocation through the fake driver" a_job_allocates
check "systemctl reload applies the policy" reload_applies
check "systemctl restart keeps the registered job and its data" restart_keeps_the_job
check "systemctl kill -s KILL: restarted, the job kept" killed_it_comes_back
check "a hung event loop: the watchdog restarts the daemon" the_watchdog_restarts_a_hung_loop
[ ! -d /opt/gos/next ] ||
	check "apt upgrades the packages under a running job: the unit restarted, the job kept" \
		the_upgrade_restarts_it_under_a_running_job
check "the journal carries the daemon's lines with their priorities" the_journal_has_priorities
check "the Prometheus textfile is written" the_textfile_is_written
check "the report is written and readable by its owner only" the_owner_reads_the_report
check "the sandbox and the daemon's user refuse a directory outside them, by name" the_sandbox_refuses_a_directory_outside_it
check "the daemon, not root, drives the module through /dev/gpuoversub-control" the_daemon_drives_the_module
check "the record helper's socket answers the daemon's user, refuses others" the_record_helper_serves_the_daemon_user_only
check "the record helper's socket holds at most 8 idle connections, each 5 s" the_record_helper_bounds_idle_connections
check "the Slurm facts reader reaches slurmctld: a job Slurm does not know is ended" the_facts_reader_reaches_slurmctld
check "slurmd runs on cgroup v2 with proctrack/cgroup, task/cgroup and ConstrainDevices" the_node_runs_slurmd_on_cgroup_v2
check "each job sees only its GPU's device, and the daemon maps the job's device 0 to it" \
	each_job_sees_only_its_gpu_which_the_daemon_maps
check "a process that left its task's tree (setsid, double fork) is its job's, by its cgroup" a_process_that_left_its_task_is_its_jobs
check "two jobs on one GPU get their weighted shares" two_jobs_on_one_gpu_get_their_weighted_shares
check "a restart under running jobs finds them again, and the module binds their cgroups" \
	a_restart_finds_the_jobs_and_binds_their_cgroups
check "the jobs end with their data intact, and the node stays up" the_jobs_end_intact_and_the_node_stays_up
[ ! -e /opt/gos/from-packages ] ||
	check "apt purges the packages: the daemon and the record socket stopped, nothing of them left, the user included" \
		purge_stops_it_and_leaves_nothing
echo "1..$n"
echo "GOS: done, $failed failed"
systemctl --no-block poweroff
