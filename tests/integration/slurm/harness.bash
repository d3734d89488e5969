# A private single-node Slurm for tests and the demo: its own munged, slurmctld and
# slurmd on localhost with fake GPU GRES devices, our SPANK plugin in the
# plugstack, and gpuoversubd with simulated GPUs. Needs root.
#   slurm_up DIR [PLUGSTACK_ARGS...]   slurm_down   plugstack ARGS...
# Sets SLURM_CONF, GOS_DIR, GOS_SOCK. Jobs share GPU 0 through shards.
# With GOS_ACCOUNTING=1, Slurm keeps real accounting: a MariaDB and a
# slurmdbd of the test's own (see accounting.bash), so sacct and sacctmgr
# work. GOS_SLURM_CONF_EXTRA is added to slurm.conf (more partitions, say).
# With GOS_PACKAGED=1 it uses the installed packages instead of the build
# tree: the plugstack includes /etc/slurm/plugstack.conf.d/*, as a site's
# does, and the daemon is the one the packages run, with their policy.

GOS_BUILD=$(realpath "${BUILD:-build}")
source "$(dirname "${BASH_SOURCE[0]}")/accounting.bash"
source "$(dirname "${BASH_SOURCE[0]}")/../procs.bash"

# Prefix that runs a daemon with no descriptor of ours beyond 0-2: bats,
# make and CI wait for every holder of their pipes, so one inherited pipe in
# a daemon that outlives the test hangs them all. It execs: $! stays the
# daemon's pid. It marks the daemon GOS_MARK=$GOS_DIR (procs.bash), so that
# slurm_down finds it and its slurmstepds, and nothing else.
detached=(python3 -c 'import os, sys; os.closerange(3, 1 << 16); os.environ["GOS_MARK"] = os.environ["GOS_DIR"]; os.execvp(sys.argv[1], sys.argv[1:])')

# A base port for a private Slurm, which takes four from it (slurmctld,
# slurmd, slurmdbd, MariaDB: P to P+3): none of them in use now, and all
# below the kernel's ephemeral range, where a client's outgoing connection
# cannot take one meanwhile. Test files run at once (run-tests.sh), and
# CI runs other releases' suites beside them, each with a cluster of its own.
slurm_free_port() {
	local ephemeral=32768 p _
	read -r ephemeral _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
	for _ in $(seq 50); do
		p=$((10000 + RANDOM % (ephemeral - 10004)))
		[ -z "$(ss -Htan "( sport >= :$p and sport <= :$((p + 3)) )" 2>/dev/null)" ] && break
	done
	echo "$p"
}

plugstack() {
	if [ -n "${GOS_PACKAGED:-}" ]; then
		echo "include /etc/slurm/plugstack.conf.d/*" >"$GOS_DIR/etc/plugstack.conf"
		return
	fi
	echo "required $GOS_BUILD/lib/spank_gpuoversub.so socket=$GOS_SOCK agent=$GOS_BUILD/lib/libgpuoversub.so config=$GOS_DIR/gpuoversub.yaml $*" \
		>"$GOS_DIR/etc/plugstack.conf"
}

gos_daemon_start() {
	"${detached[@]}" "$GOS_BUILD/sbin/gpuoversubd" -c "$GOS_DIR/gpuoversub.yaml" </dev/null >/dev/null \
		2>>"$GOS_DIR/log/gpuoversubd.log" &
	echo $! >"$GOS_DIR/run/gpuoversubd.pid"
	for _ in $(seq 100); do [ -S "$GOS_SOCK" ] && return 0; sleep 0.05; done
	echo "gpuoversubd did not start" >&2
	return 1
}

gos_daemon_stop() {
	local pid
	pid=$(cat "$GOS_DIR/run/gpuoversubd.pid" 2>/dev/null) || return 0
	kill "$pid" 2>/dev/null
	for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
	rm -f "$GOS_SOCK" "$GOS_DIR/run/gpuoversubd.pid"
}

# The test daemon's policy: gos_policy SOCKET STATE_DIR REPORT_DIR
# ADMIN_COMMENT PCI_BUS_ID... (one simulated 256 MiB GPU per bus id).
gos_policy() {
	local bus
	cat <<YAML
socket: $1
state_dir: $2
reports: {dir: $3, admin_comment: $4}
reserve: 0
chunk_size: 2M
return_interval: 50ms
max_oversub: 4
over_ceiling: clamp
simulated_gpus:
YAML
	for bus in "${@:5}"; do echo "  - {memory: 256M, numa_node: 0, pci_bus_id: '$bus'}"; done
}

# The harness's own munged, on a socket of its own (slurm.conf's AuthInfo):
# the machine's munged, if any, is neither used nor touched. It runs under
# another name (a link), so that what stops "munged" by name (a site's
# script, an older copy of this harness) cannot stop it under a test.
gos_munge_start() {
	local m=$GOS_DIR/munge
	mkdir -p "$m" && chown munge:munge "$m" && chmod 0755 "$m" "$GOS_DIR" || return 1
	ln -sf /usr/sbin/munged "$m/gos-munged"
	"${detached[@]}" setpriv --reuid=munge --regid=munge --init-groups "$m/gos-munged" --foreground \
		--socket="$GOS_MUNGE_SOCK" --pid-file="$m/munged.pid" --seed-file="$m/munged.seed" \
		--log-file="$m/munged.log" </dev/null >/dev/null 2>&1 &
	echo $! >"$GOS_DIR/run/munged.pid"
	wait_until 10 eval 'munge -S "$GOS_MUNGE_SOCK" -n 2>/dev/null | unmunge -S "$GOS_MUNGE_SOCK" >/dev/null 2>&1' || {
		echo "munged did not start:" >&2; tail -5 "$m/munged.log" >&2; return 1; }
}

slurm_up() {
	GOS_DIR=$1; shift
	GOS_SOCK=$GOS_DIR/run/gpuoversubd.sock GOS_MUNGE_SOCK=$GOS_DIR/munge/munge.socket
	[ -z "${GOS_PACKAGED:-}" ] || GOS_SOCK=/run/gpuoversub/gpuoversubd.sock
	mkdir -p "$GOS_DIR"/{etc,state,spool,run,log,reports,gos-state}
	export SLURM_CONF=$GOS_DIR/etc/slurm.conf GOS_DIR GOS_SOCK GOS_MUNGE_SOCK
	cat >"$SLURM_CONF" <<CONF
ClusterName=gostest
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$GOS_MUNGE_SOCK
StateSaveLocation=$GOS_DIR/state
SlurmdSpoolDir=$GOS_DIR/spool/slurmd.%n
SlurmctldPidFile=$GOS_DIR/run/slurmctld.pid
SlurmdPidFile=$GOS_DIR/run/slurmd.%n.pid
SlurmctldLogFile=$GOS_DIR/log/slurmctld.log
SlurmdLogFile=$GOS_DIR/log/slurmd.log
SlurmctldPort=${GOS_SLURM_PORT:-16817}
SlurmdPort=$(( ${GOS_SLURM_PORT:-16817} + 1 ))
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
$(if [ -n "${GOS_ACCOUNTING:-}" ]; then accounting_conf; else echo AccountingStorageType=accounting_storage/none; fi)
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=100
MpiDefault=none
ReturnToService=2
KillWait=2
MinJobAge=300
PrologFlags=Alloc
GresTypes=gpu,shard
PlugStackConfig=$GOS_DIR/etc/plugstack.conf
NodeName=node1 NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=2 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=2000 Gres=gpu:1,shard:4 State=UNKNOWN
PartitionName=debug Nodes=node1 Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
${GOS_SLURM_CONF_EXTRA:-}
CONF
	[ -e "$GOS_DIR/dev_gpu0" ] || mknod "$GOS_DIR/dev_gpu0" c 1 3
	cat >"$GOS_DIR/etc/gres.conf" <<CONF
NodeName=node1 Name=gpu File=$GOS_DIR/dev_gpu0
NodeName=node1 Name=shard Count=4 File=$GOS_DIR/dev_gpu0
CONF
	gos_policy "$GOS_SOCK" "$GOS_DIR/gos-state" "$GOS_DIR/reports" false 0000:17:00.0 >"$GOS_DIR/gpuoversub.yaml"
	plugstack "$@"
	gos_munge_start || return 1
	[ -z "${GOS_ACCOUNTING:-}" ] || accounting_up || return 1
	[ -n "${GOS_PACKAGED:-}" ] || gos_daemon_start || return 1
	"${detached[@]}" slurmctld -c </dev/null >/dev/null 2>&1 || return 1
	"${detached[@]}" slurmd -N node1 </dev/null >/dev/null 2>&1 || return 1
	# 60 s: on a CI machine building three releases at once, 20 s ran out.
	for _ in $(seq 600); do
		[ "$(sinfo -h -o %T 2>/dev/null)" = idle ] && return 0
		sleep 0.1
	done
	echo "slurm did not come up in 60 s:" >&2
	tail -n 20 "$GOS_DIR/log/slurmctld.log" "$GOS_DIR/log/slurmd.log" >&2
	return 1
}

slurm_down() {
	local f pid
	for f in "$GOS_DIR"/run/slurmd.*.pid "$GOS_DIR/run/slurmctld.pid"; do
		pid=$(cat "$f" 2>/dev/null) || continue
		kill "$pid" 2>/dev/null
		for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
		kill -9 "$pid" 2>/dev/null
	done
	[ -n "${GOS_PACKAGED:-}" ] || gos_daemon_stop
	accounting_down
	pid=$(cat "$GOS_DIR/run/munged.pid" 2>/dev/null) && kill_pids "$pid"
	rm -f "$GOS_DIR/run/munged.pid"
	# What is left of ours: slurmstepds, and daemons whose pid file never
	# got written (slurm_up failed midway).
	kill_marked "$GOS_DIR"
}

# What every job of a test file inherits (sbatch exports the submitter's
# environment): the fake CUDA driver with its 256 MiB GPU.
slurm_job_env() {
	export LD_LIBRARY_PATH=$GOS_BUILD/tests/fakecuda FAKECUDA_MEMORY=256M FAKECUDA_STATE=$GOS_DIR/fakecuda.state \
		ASAN_OPTIONS=verify_asan_link_order=0:fast_unwind_on_fatal=0	# the sanitizer build's agent is preloaded first; a crash's stack unwound in full
	export GOS_DIR GOS_SOCK SLURM_CONF
}

# A test file's end: everything stopped, its directory gone.
slurm_teardown() {
	slurm_down
	rm -rf "$GOS_DIR"
}

# Waits until job $1 has finished, for up to 120 s (a machine building
# three releases at once starts a six-rank MPI step slowly); prints its state.
job_wait() {
	local state deadline=$((SECONDS + 120))
	while [ "$SECONDS" -lt "$deadline" ]; do
		state=$(scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
		case $state in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY) echo "$state"; return 0;; esac
		sleep 0.1
	done
	echo "TIMEOUT_WAITING($state)"
	return 1
}

# job_completed ID [OUTPUT]: whether job ID ended COMPLETED (job_wait).
# When not, it shows why: the job's output (OUTPUT, by default
# $GOS_DIR/out-ID.txt), the lines of Slurm's logs that name it, and the
# state it ended in, last, where a failing test's tail shows it.
job_completed() {
	local state out=${2:-$GOS_DIR/out-$1.txt}
	state=$(job_wait "$1") && [ "$state" = COMPLETED ] && return 0
	echo "job $1's output:"
	tail -n 40 "$out"
	echo "Slurm's logs of job $1:"
	grep -hE "(JobId=|StepId=|job[ _]?)$1([^0-9]|\$)" "$GOS_DIR"/log/slurm*.log | tail -n 12
	# Last, as CI shows a failure's last lines: the output's own errors,
	# which a launcher's messages (an MPI abort's) can push out of its tail.
	echo "the lines of job $1's output that say error, bad or fail:"
	grep -aiE 'error|bad|fail' "$out" | head -n 12
	echo "job $1 ended $state, not COMPLETED"
	return 1
}
