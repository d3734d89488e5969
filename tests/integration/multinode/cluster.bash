# A private three-node Slurm on this one machine, for the tests of jobs that
# span nodes. Each node (n1, n2, n3) is a network, mount and UTS namespace
# the harness makes: slurmd, its own gpuoversubd with two simulated GPUs
# (4 shards each) and its own state, report and socket directories, bound
# over the configured paths ($GOS_DIR/node) inside the node. slurmctld and
# the test's Slurm clients live in a fourth namespace, the head. A bridge in
# a fifth joins them through veth pairs on a private /24; no namespace has a
# route beyond it. munge is shared: the harness's own munged (harness.bash).
# Accounting is real: accounting.bash's MariaDB and slurmdbd on the head,
# which the nodes' gpuoversubd reach at the head's address to write each
# run's job-wide record.
#   cluster_up DIR [PLUGSTACK_ARGS...]   cluster_down
#   on_head CMD...       runs CMD where slurmctld is (sbatch, scontrol, sacct)
#   on_node NODE CMD...  runs CMD inside NODE's namespaces
#   node_daemon_start NODE / node_daemon_kill NODE   that node's gpuoversubd
#   node_fail NODE / node_up NODE   kills all of a node at once, starts it again
# Needs root, ip (iproute2) and unshare. Nothing of ours talks node to node.

source "$(dirname "${BASH_SOURCE[0]}")/../slurm/harness.bash"

NODES=(n1 n2 n3)

# Namespace names are global: they carry the test's Slurm port, as does
# the subnet, so two copies of the suite never meet.
ns() { echo "gos${GOS_SLURM_PORT:-16817}-$1"; }
subnet() { local p=${GOS_SLURM_PORT:-16817}; echo "10.$((p / 256 % 256)).$((p % 256))"; }
node_ip() { case $1 in head) echo "$(subnet).1";; n*) echo "$(subnet).$((10 + ${1#n}))";; esac; }

# nsenter, not `ip netns exec`, which remounts /sys without the cgroup
# mounts slurmd needs.
in_net() { local x=$1; shift; nsenter --net="/run/netns/$(ns "$x")" -- "$@"; }
on_head() { in_net head "$@"; }
on_node() {
	local node=$1; shift
	nsenter --target "$(cat "$GOS_DIR/run/slurmd.$node.pid")" --net --mount --uts -- "$@"
}

cluster_net_up() {
	local x sw
	sw=$(ns switch)
	ip netns add "$sw" && ip -n "$sw" link add br0 type bridge && ip -n "$sw" link set br0 up || return 1
	for x in head "${NODES[@]}"; do
		ip netns add "$(ns "$x")" || return 1
		ip -n "$sw" link add "v-$x" type veth peer name eth0 netns "$(ns "$x")" || return 1
		ip -n "$sw" link set "v-$x" master br0 up
		# A non-loopback address: getaddrinfo's AI_ADDRCONFIG (Slurm) and
		# Open MPI's out-of-band channel refuse a loopback-only namespace.
		ip -n "$(ns "$x")" addr add "$(node_ip "$x")/24" dev eth0
		ip -n "$(ns "$x")" link set eth0 up
		ip -n "$(ns "$x")" link set lo up
	done
}

cluster_net_down() {
	local x
	for x in head "${NODES[@]}" switch; do
		[ ! -e "/run/netns/$(ns "$x")" ] || ip netns del "$(ns "$x")"
	done
}

cluster_conf() {
	local pstack=$1
	cat >"$SLURM_CONF" <<CONF
ClusterName=gosmulti
SlurmctldHost=head($(node_ip head))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$GOS_MUNGE_SOCK,cred_expire=5
StateSaveLocation=$GOS_DIR/state
SlurmdSpoolDir=$GOS_DIR/spool/slurmd.%n
SlurmctldPidFile=$GOS_DIR/run/slurmctld.pid
SlurmdPidFile=$GOS_DIR/run/slurmd.%n.pid
SlurmctldLogFile=$GOS_DIR/log/slurmctld.log
SlurmdLogFile=$GOS_DIR/log/slurmd.%n.log
SlurmctldPort=${GOS_SLURM_PORT:-16817}
SlurmdPort=$(( ${GOS_SLURM_PORT:-16817} + 1 ))
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
$(accounting_conf)
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=100
MpiDefault=none
ReturnToService=2
SlurmdTimeout=10
KillWait=2
MinJobAge=300
PrologFlags=Alloc
GresTypes=gpu,shard
PlugStackConfig=$pstack
NodeName=n1 NodeHostname=n1 NodeAddr=$(node_ip n1) CPUs=2 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=1000 Gres=gpu:2,shard:8 State=UNKNOWN
NodeName=n2 NodeHostname=n2 NodeAddr=$(node_ip n2) CPUs=2 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=1000 Gres=gpu:2,shard:8 State=UNKNOWN
NodeName=n3 NodeHostname=n3 NodeAddr=$(node_ip n3) CPUs=2 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=1000 Gres=gpu:2,shard:8 State=UNKNOWN
PartitionName=debug Nodes=n[1-3] Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
	# PMIx's client directories are named by job and step only: each node
	# needs its own base, not the /tmp they share.
	echo "PMIxCliTmpDirBase=$GOS_DIR/node/pmix" >"$GOS_DIR/etc/mpi.conf"
	cat >"$GOS_DIR/etc/gres.conf" <<CONF
NodeName=n[1-3] Name=gpu File=$GOS_DIR/dev_gpu[0-1]
NodeName=n[1-3] Name=shard Count=4 File=$GOS_DIR/dev_gpu0
NodeName=n[1-3] Name=shard Count=4 File=$GOS_DIR/dev_gpu1
CONF
}

# The node's own files, seen inside the node at $GOS_DIR/node.
node_files() {
	local n=$GOS_DIR/nodes/$1
	mkdir -p "$n"/{run,state,reports,pmix}
	gos_policy "$GOS_DIR/node/run/gpuoversubd.sock" "$GOS_DIR/node/state" "$GOS_DIR/node/reports" true \
		0000:17:00.0 0000:65:00.0 >"$n/gpuoversub.yaml"
	echo 'advice: {persist: 1s}' >>"$n/gpuoversub.yaml"	# MPI advice within a test's time
	# A node's restarted daemon ends what died with the node by its
	# reconciler: within a test's time, and a bound the tests can name.
	echo 'reconcile: {period: 5s, grace: 30s}' >>"$n/gpuoversub.yaml"
	# The job-wide door (open: admin_comment is on) checks credentials with
	# the harness's munged; the record is written as root, by the daemon.
	# A node that never sends is named missing after 10 s, and parts go to
	# the successor too after 5 s, not a minute each.
	echo "jobwide: {munge_socket: $GOS_MUNGE_SOCK, record_helper: direct, wait: 10s, failover_after: 5s}" \
		>>"$n/gpuoversub.yaml"
}

node_daemon_start() {
	rm -f "$GOS_DIR/nodes/$1/run/gpuoversubd.sock"	# a killed one's
	# A simple command, not on_node: $! of a function would be a subshell's
	# pid, and the daemon would outlive its kill. nsenter and the prefix exec.
	nsenter --target "$(cat "$GOS_DIR/run/slurmd.$1.pid")" --net --mount --uts -- \
		"${detached[@]}" "$GOS_BUILD/sbin/gpuoversubd" -c "$GOS_DIR/node/gpuoversub.yaml" </dev/null \
		>/dev/null 2>>"$GOS_DIR/log/gpuoversubd.$1.log" &
	echo $! >"$GOS_DIR/nodes/$1/run/gpuoversubd.pid"
	disown $!	# a kill -9 of it is the test's, not news for the shell
	wait_until 10 test -S "$GOS_DIR/nodes/$1/run/gpuoversubd.sock"
}

node_daemon_kill() {	# NODE [SIGNAL]
	local pid
	pid=$(cat "$GOS_DIR/nodes/$1/run/gpuoversubd.pid") || return 1
	kill "-${2:-TERM}" "$pid"
	wait_until 10 gone "$pid"
	rm -f "$GOS_DIR/nodes/$1/run/gpuoversubd.sock"
}

# A node fails: every process in its network namespace (slurmd, its
# slurmstepds and tasks, its gpuoversubd: all the harness started there)
# is killed at once.
node_pids() {
	local want pid
	want=$(stat -L -c %i "/run/netns/$(ns "$1")") || return 1
	for pid in /proc/[0-9]*; do
		[ "$(stat -L -c %i "$pid/ns/net" 2>/dev/null)" = "$want" ] && echo "${pid#/proc/}"
	done
	return 0
}
node_fail() {
	local pids
	pids=$(node_pids "$1")
	# shellcheck disable=SC2086
	[ -z "$pids" ] || { kill -9 $pids; wait_until 10 gone $pids; }
	# What the dead leave behind must not pass for a live node's.
	rm -f "$GOS_DIR/run/slurmd.$1.pid" "$GOS_DIR/nodes/$1/run/gpuoversubd".{pid,sock}
}

# A node comes up in a namespace of its own: its directory bound over
# $GOS_DIR/node, its host name, then slurmd, which daemonizes (its pid file
# names it), and the node's gpuoversubd inside it.
node_up() {
	local node=$1
	node_files "$node"
	in_net "$node" "${detached[@]}" unshare --mount --uts --propagation private -- sh -c '
		mount --bind "$1/nodes/$2" "$1/node" && hostname "$2" && exec slurmd -N "$2"' sh "$GOS_DIR" "$node" \
		</dev/null >/dev/null 2>>"$GOS_DIR/log/node-$node.log" || return 1
	wait_until 10 test -s "$GOS_DIR/run/slurmd.$node.pid" || return 1
	node_daemon_start "$node"
}

cluster_up() {
	GOS_DIR=$1; shift
	GOS_SOCK=$GOS_DIR/node/run/gpuoversubd.sock GOS_MUNGE_SOCK=$GOS_DIR/munge/munge.socket
	mkdir -p "$GOS_DIR"/{etc,state,spool,run,log,node}
	GOS_DBD_HOST=$(node_ip head)
	export SLURM_CONF=$GOS_DIR/etc/slurm.conf GOS_DIR GOS_SOCK GOS_MUNGE_SOCK GOS_DBD_HOST
	cluster_conf "$GOS_DIR/etc/plugstack.conf"
	local g
	for g in 0 1; do [ -e "$GOS_DIR/dev_gpu$g" ] || mknod "$GOS_DIR/dev_gpu$g" c 1 3; done
	echo "required $GOS_BUILD/lib/spank_gpuoversub.so socket=$GOS_SOCK agent=$GOS_BUILD/lib/libgpuoversub.so config=$GOS_DIR/node/gpuoversub.yaml $*" \
		>"$GOS_DIR/etc/plugstack.conf"
	gos_munge_start || return 1
	cluster_net_up || { echo "the test network did not come up" >&2; return 1; }
	on_head bash -c 'source tests/integration/slurm/harness.bash && accounting_up &&
		sacctmgr -i add account acct1 >/dev/null && sacctmgr -i add user root account=acct1 >/dev/null' || return 1
	# slurmctld knows itself by host name: the head's is "head".
	on_head "${detached[@]}" unshare --uts -- sh -c 'hostname head && exec slurmctld -c' \
		</dev/null >/dev/null 2>>"$GOS_DIR/log/head.log" || return 1
	for g in "${NODES[@]}"; do node_up "$g" || { echo "node $g did not come up:" >&2; tail -n 5 "$GOS_DIR/log/slurmd.$g.log" "$GOS_DIR/log/node-$g.log" >&2; return 1; }; done
	wait_until 60 all_idle || { tail -n 20 "$GOS_DIR/log/slurmctld.log" >&2; return 1; }
}

all_idle() { [ "$(on_head sinfo -h -o %T 2>/dev/null | sort -u)" = idle ]; }

cluster_down() {
	local f pid
	for f in "$GOS_DIR"/run/slurmd.*.pid "$GOS_DIR/run/slurmctld.pid" "$GOS_DIR"/nodes/*/run/gpuoversubd.pid \
		"$GOS_DIR/run/munged.pid"; do
		pid=$(cat "$f" 2>/dev/null) && kill_pids "$pid"
	done
	accounting_down
	kill_marked "$GOS_DIR"	# slurmstepds, tasks' leftovers
	cluster_net_down
}
