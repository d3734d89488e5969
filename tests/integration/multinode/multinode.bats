#!/usr/bin/env bats
# Jobs that span nodes, in a real three-node Slurm on this machine
# (cluster.bash): each node in its own namespaces with its own gpuoversubd
# and two simulated GPUs, and real accounting on the head. Each node's
# epilog hands its part of the run to its daemon, which sends it to the
# run's writer, n1 (the first node), over the job-wide channel; n1 writes
# the run's record into accounting once (issue 30). Needs root.

load ../wait

setup_file() {
	export BUILD=${BUILD:-build}
	source tests/integration/multinode/cluster.bash
	# A port of the caller's (copies of the suite running at once), or a random one.
	export GOS_SLURM_PORT=${GOS_SLURM_PORT:-$(slurm_free_port)}
	dir=$(mktemp -d /tmp/gos-multi-XXXXXX)
	cluster_up "$dir" 3>&- || { cluster_down; return 1; }
	export LD_LIBRARY_PATH=$GOS_BUILD/tests/fakecuda FAKECUDA_MEMORY=256M FAKECUDA_DEVICES=2 \
		FAKECUDA_STATE=$GOS_DIR/node/fakecuda.state ASAN_OPTIONS=verify_asan_link_order=0:fast_unwind_on_fatal=0
}

teardown_file() {
	source tests/integration/multinode/cluster.bash
	cluster_down
	rm -rf "$GOS_DIR"
}

setup() {
	source tests/integration/multinode/cluster.bash
}

# Job $1's job-wide records in accounting (sacct -D: one line per run), as
# a JSON list of their segments.
records() {
	on_head sacct -j "$1" -X -D -n -P -o AdminComment | python3 -c '
import json, sys
print(json.dumps([json.loads(l[l.index("gpuoversub=") + 11:]) for l in sys.stdin.read().splitlines() if "gpuoversub=" in l]))'
}
# Whether job $1 has $2 records in accounting.
has_records() { [ "$(records "$1" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')" -eq "$2" ]; }
# Waits until job $1 has $2 records; shows what there is, and the writer's log, when it does not.
records_come() {
	wait_until 60 has_records "$1" "$2" && return 0
	records "$1"; tail -n 8 "$GOS_DIR/log/gpuoversubd.n1.log"
	return 1
}
# Whether job $1's one record names every node's part and none missing.
whole_record() {
	records_come "$1" 1 || return 1
	records "$1" | python3 -c '
import json, sys
[o] = json.load(sys.stdin)
assert o["n"] == 3 and o["parts"] == 3 and o["missing"] == "" and o["writer"] == "n1", o'
}
# A job on NODES nodes (more sbatch options after it) whose one step runs a
# task per node: two 32 MiB buffers, written and checked, after HOLD seconds.
job_on() {
	local nodes=$1 hold=$2; shift 2
	on_head sbatch --parsable -N"$nodes" --gpu-mem-oversub -o "$GOS_DIR/out-%j.txt" "$@" \
		--wrap "srun -N$nodes --ntasks-per-node=1 bash -c \"(printf 'alloc a 32\\nalloc b 32\\n'; sleep $hold; printf 'verify a\\nverify b\\nquit\\n') | $GOS_BUILD/tests/tools/gos_testapp\""
}
# harness.bash's FUNCTION JOB, on the head node: job_wait prints the state
# job JOB ended in; job_completed says whether it was COMPLETED, and if not, why.
on_head_harness() { on_head bash -c "source tests/integration/slurm/harness.bash; $1 $2"; }
job_end() { on_head_harness job_wait "$1"; }
completed() { on_head_harness job_completed "$1"; }
ctl_on() { local n=$1; shift; on_node "$n" "$GOS_BUILD/bin/gpuoversubctl" --socket "$GOS_SOCK" "$@"; }
# The weights of job $2's tenants on node $1, one per GPU: "0:1.0 1:1.0".
weights_on() {
	ctl_on "$1" --json status | python3 -c '
import json, sys
s = json.load(sys.stdin)
print(" ".join("%d:%.2f" % (g["gpu"], t["weight"]) for g in s["gpus"] for t in g["tenants"] if t["job"] == int(sys.argv[1])))' "$2"
}
weights_are() { [ "$(weights_on "$1" "$2")" = "$3" ]; }

@test "a job on three nodes: its record in accounting has every node's part and the totals, the writer's file every part, and each node reports its own" {
	id=$(job_on 3 0 --gres=shard:2)
	completed "$id"
	cat "$GOS_DIR/out-$id.txt"
	records_come "$id" 1
	on_head sacct -j "$id" -X -D -o JobID,NodeList,AdminComment%2000
	records "$id" | python3 -c '
import json, sys
[o] = json.load(sys.stdin)
assert o["gos"] == 3 and o["run"] == 0 and o["writer"] == "n1", o
assert o["n"] == 3 and o["parts"] == 3 and o["missing"] == "" and o["gpus"] == 3, o
assert o["sum"]["peak_dev"] == 3 * (64 << 20) and o["node"]["peak_dev"] == [64 << 20] * 3, o
assert o["file"] == "job-%s.run-0.jobwide.json" % sys.argv[1], o' "$id"
	# The writer's file holds every part as sent, and the field it wrote.
	python3 - "$GOS_DIR/nodes/n1/reports/job-$id.run-0.jobwide.json" "$(on_head sacct -j "$id" -X -n -P -o AdminComment)" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))
assert sorted(p["node"] for p in f["parts"]) == ["n1", "n2", "n3"], f
assert all(p["peak_dev"] == 64 << 20 and p["gpus"] == ["0000:17:00.0"] for p in f["parts"]), f
assert f["field"] == sys.argv[2], (f["field"], sys.argv[2])
PY
	for n in n1 n2 n3; do
		# Each node's report names that node and its GPU by PCI bus id.
		python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["node"] == sys.argv[2] and [g["pci_bus_id"] for g in r["gpus"]] == ["0000:17:00.0"], r' \
			"$GOS_DIR/nodes/$n/reports/job-$id.json" "$n"
	done
	# On any node, gpuoversubctl report gives its own part and the job's whole.
	run on_node n2 "$GOS_BUILD/bin/gpuoversubctl" --socket "$GOS_SOCK" report "$id"
	echo "$output"
	[[ "$output" == *"on node n2, GPU 0 (0000:17:00.0)"* ]]
	[[ "$output" == *"job-wide (AdminComment, from sacct): run 0, started "*", written by n1: parts from 3 of 3 nodes, 3 GPUs, 0 late"* ]]
}

@test "a job with --gres=gpu:2 on two nodes has four tenants, each a whole GPU's share; a shard job its shards' share" {
	id=$(job_on 2 30 --gres=gpu:2)
	wait_until 30 weights_are n1 "$id" "0:1.00 1:1.00"
	wait_until 10 weights_are n2 "$id" "0:1.00 1:1.00"
	ctl_on n2 explain "$id" | grep -q '4 of 4 shards (the whole GPU)'
	# Beside it on n3, shards: 2 of GPU 0's 4 (slurm.conf's shard counts, per GPU).
	sid=$(job_on 1 30 --gres=shard:2 -w n3)
	wait_until 30 weights_are n3 "$sid" "0:0.50"
	ctl_on n3 explain "$sid" | grep -q '2 of 4 shards'
	on_head scancel "$id" "$sid"
	job_end "$id"
	job_end "$sid"
}

# Each run has its own start, writer and record (the restart count alone
# names no run: a requeue of a running job counts the next run early).
@test "a requeued job keeps each run's record: runs 0 and 1 in accounting, every node's part in each" {
	id=$(job_on 3 0 --gres=shard:1 --requeue)
	completed "$id"
	on_head scontrol requeue "$id"
	wait_until 60 eval "on_head scontrol -o show job $id | grep -q 'JobState=COMPLETED.*Restarts=1'"
	records_come "$id" 2
	on_head sacct -j "$id" -X -D -o JobID,State,Start,AdminComment%300
	records "$id" | python3 -c '
import json, sys
runs = json.load(sys.stdin)
assert [o["run"] for o in runs] == [0, 1] and runs[0]["start"] < runs[1]["start"], runs
assert all(o["parts"] == 3 and o["missing"] == "" and o["sum"]["peak_dev"] == 3 * (64 << 20) for o in runs), runs'
	[ -f "$GOS_DIR/nodes/n1/reports/job-$id.run-0.jobwide.json" ]
	[ -f "$GOS_DIR/nodes/n1/reports/job-$id.run-1.jobwide.json" ]
}

@test "one node's gpuoversubd killed mid-job and restarted: the job completes, every node has its part, none keeps the job, and that node's report says what it lost" {
	id=$(job_on 3 4 --gres=shard:1)
	wait_until 30 eval "[ -n \"\$(weights_on n2 $id)\" ]"
	node_daemon_kill n2 KILL
	node_daemon_start n2
	completed "$id"
	grep 'gpuoversub' "$GOS_DIR/log/slurmd.n2.log" | tail -5
	whole_record "$id"
	cat "$GOS_DIR/out-$id.txt"
	# On every node, two allocations, two checks and the quit succeeded: the
	# data is intact.
	[ "$(grep -cx ok "$GOS_DIR/out-$id.txt")" -eq 15 ]
	! grep -vqx 'ok\|ready' "$GOS_DIR/out-$id.txt"
	for n in n1 n2 n3; do
		wait_until 10 eval "[ \"\$(ctl_on $n --json jobs)\" = '[]' ]"	# no stale job on any node
	done
	# n2's report says what n2 lost: its daemon restarted, and its GPU's
	# counters restarted from the saved record (the simulated engine died
	# with the daemon). The other nodes' say nothing of the kind.
	python3 - "$GOS_DIR/nodes" "$id" <<'PY'
import json, sys
r = {n: json.load(open("%s/%s/reports/job-%s.json" % (sys.argv[1], n, sys.argv[2]))) for n in ("n1", "n2", "n3")}
lost = r["n2"]["daemon_restarts"]
assert len(lost) == 1 and lost[0]["at"] >= r["n2"]["started"], r["n2"]
assert lost[0]["gpus"] == [{"gpu": 0, "pci_bus_id": "0000:17:00.0", "counters": "saved_record"}], lost
assert r["n1"]["daemon_restarts"] == [] and r["n3"]["daemon_restarts"] == [], r
PY
	run ctl_on n2 report "$id"
	echo "$output"
	[[ "$output" == *"gpuoversubd restarted at 20"*": GPU 0 (0000:17:00.0) counters restarted from the saved record"* ]]
}

# How the ranks of the MPI tests below talk across nodes: UCX over TCP on
# the cluster's network (eth0 in each node's namespace), as Open MPI talks
# on a real cluster's fabric through UCX. Not Open MPI's own TCP transport
# (btl/tcp): Debian 12's Open MPI 4.1.4 crashes there now and then in
# MPI_Init, a call through a null pointer under opal_progress from
# mca_btl_tcp.so (open-mpi/ompi #3035), in 2 runs of 10 of the srun test
# under ASan with both CPUs busy, though every endpoint was made in MPI_Init
# and only the cluster's network was named. Open MPI's UCX PML takes only
# RDMA transports unless told `any`; btl/tcp stays out, as Debian testing's
# Open MPI (6.0.0~rc2-2) names only lo for it in openmpi-mca-params.conf.
UCX_ENV="OMPI_MCA_pml=ucx OMPI_MCA_pml_ucx_tls=any OMPI_MCA_pml_ucx_devices=any OMPI_MCA_btl=^tcp UCX_TLS=tcp,self,sm UCX_NET_DEVICES=eth0"

# What a six-rank MPI job (two ranks a node) must show, however it was
# launched: every rank ran, gpuoversub_mpi_exchange gave all six the same
# table with a row per rank, rank 0's node's report has every node's ranks,
# and every node's part is in the job's record.
six_ranks_across_nodes() {
	local id=$1
	[ "$(grep -c '^rank [0-5] of 6 local [01] ok$' "$GOS_DIR/out-$id.txt")" -eq 6 ]
	# gpuoversub_mpi_exchange: the same table on all six ranks, a row per rank.
	[ "$(grep '^rank [0-5] exchange ' "$GOS_DIR/out-$id.txt" | cut -d' ' -f4- | sort -u | wc -l)" -eq 1 ]
	grep '^rank 0 exchange ' "$GOS_DIR/out-$id.txt" | grep -q ' 0:1:1.00:[0-9]* .* 5:1:1.00:[0-9]*$'
	# The per-rank breakdown, in the report of rank 0's node, has every node's ranks.
	python3 - "$GOS_DIR/nodes/n1/reports/job-$id.json" <<'PY'
import json, sys
ranks = json.load(open(sys.argv[1]))["mpi_ranks"]
assert sorted((r["rank"], r["node"]) for r in ranks) == [(0, "n1"), (1, "n1"), (2, "n2"), (3, "n2"), (4, "n3"), (5, "n3")], ranks
assert all(r["managed"] and r["exchanges"] == 1 for r in ranks), ranks
PY
	whole_record "$id"
}

@test "srun --mpi=pmix across three nodes: one exchange table of every rank's headroom on every rank, and rank 0's gather covers every node" {
	[ -x "$GOS_BUILD/tests/integration/mpi/gos_mpi_app" ] || skip "the MPI side was not built (make says why)"
	source tests/integration/mpi/launch.bash
	pmix_or_skip "the two mpirun tests below make the same assertions"
	id=$(on_head sbatch --parsable -N3 -n6 -O --gres=shard:1 --gpu-mem-oversub -o "$GOS_DIR/out-%j.txt" \
		--wrap "ASAN_OPTIONS=\$ASAN_OPTIONS:detect_leaks=0 $UCX_ENV srun --mpi=pmix -N3 -n6 -O $GOS_BUILD/tests/integration/mpi/gos_mpi_app basic")
	completed "$id"
	cat "$GOS_DIR/out-$id.txt"
	six_ranks_across_nodes "$id"
}

# mpirun inside an allocation of three nodes starts its daemons on the
# other nodes through srun (Open MPI's plm/slurm, named so that a fallback
# to ssh fails here). Six ranks, two a node (--map-by ppr:2:node: Open MPI
# 5 with --oversubscribe put all six on the first node), each on its node's
# GPU of its local rank, whole GPUs (gpu:2). That srun is --mpi=none, so
# mpi_hooks=auto preloads only the agent: gos_mpi_app has the hooks linked in.
# The ranks talk as the srun test's do (UCX_ENV), mpirun passing UCX's
# settings on to them.
mpirun_job() {
	on_head sbatch --parsable -N3 -n6 --gres=gpu:2 --gpu-mem-oversub -o "$GOS_DIR/out-%j.txt" \
		--wrap "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ASAN_OPTIONS=\$ASAN_OPTIONS:detect_leaks=0 $UCX_ENV timeout -k 5 90 mpirun --mca plm slurm -n 6 --map-by ppr:2:node -x UCX_TLS -x UCX_NET_DEVICES $GOS_BUILD/tests/integration/mpi/gos_mpi_app $*"
}

@test "mpirun across three nodes: every rank's headroom in the exchange, and the per-rank breakdown covers every node" {
	[ -x "$GOS_BUILD/tests/integration/mpi/gos_mpi_app" ] || skip "the MPI side was not built (make says why)"
	id=$(mpirun_job basic)
	completed "$id"
	cat "$GOS_DIR/out-$id.txt"
	six_ranks_across_nodes "$id"
}

@test "advice reaches a rank on every node: each node's oversubscribed rank is advised and its cold buffer pinned and evicted first" {
	[ -x "$GOS_BUILD/tests/integration/mpi/gos_mpi_app" ] || skip "the MPI side was not built (make says why)"
	# Local rank 0 on each node overfills its GPU (3 x 96 MiB on 256 MiB).
	id=$(mpirun_job pressure 96)
	completed "$id"
	cat "$GOS_DIR/out-$id.txt"
	for r in 0 2 4; do
		grep -q "^rank $r advice rank $r local 0 action 2 pinned 96 " "$GOS_DIR/out-$id.txt"
		[ "$(sed -n "s/^rank $r where cold [0-9]* \([0-9]*\)$/\1/p" "$GOS_DIR/out-$id.txt")" -gt 0 ]	# pinned buffer left
		[ "$(sed -n "s/^rank $r where hot [0-9]* \([0-9]*\)$/\1/p" "$GOS_DIR/out-$id.txt")" -eq 0 ]	# hot one stayed
	done
	[ "$(grep -c '^rank [0-5] of 6 local [01] ok$' "$GOS_DIR/out-$id.txt")" -eq 6 ]
	# Every rank sees each node's pressed rank and its neighbour's headroom.
	[ "$(grep -c '^rank [0-5] exchange [0-9a-f]* 0:1:1\.[1-9][0-9]*:0 1:1:1.00:248 2:1:1\.[1-9][0-9]*:0 3:1:1.00:248 4:1:1\.[1-9][0-9]*:0 5:1:1.00:248$' "$GOS_DIR/out-$id.txt")" -eq 6 ]
	# Each node's report counts the advice its own rank got.
	python3 - "$GOS_DIR/nodes/n1/reports/job-$id.json" <<'PY'
import json, sys
r = {x["rank"]: x for x in json.load(open(sys.argv[1]))["mpi_ranks"]}
assert sorted((x["rank"], x["node"]) for x in r.values()) == [(0, "n1"), (1, "n1"), (2, "n2"), (3, "n2"), (4, "n3"), (5, "n3")], r
assert all(r[i]["advice"] >= 1 and r[i]["pinned_bytes"] == 96 << 20 for i in (0, 2, 4)), r
assert all(r[i]["advice"] == 0 and r[i]["pinned_bytes"] == 0 for i in (1, 3, 5)), r
PY
}

# A batch job whose node fails is requeued (JobRequeue). The failed node
# never sends its part of the run: after jobwide.wait (10 s here) the
# writer writes the run's record with the parts it has, the node named
# missing.
@test "a node failing mid-job: the job is requeued, the run's record keeps the other nodes' parts and names the failed node" {
	id=$(job_on 3 60 --gres=shard:1)
	for n in n1 n2 n3; do wait_until 30 eval "[ -n \"\$(weights_on $n $id)\" ]"; done
	node_fail n3
	# slurmctld notices after SlurmdTimeout (10 s) and requeues the job;
	# the other nodes' epilogs hand their parts to n1.
	wait_until 120 has_records "$id" 1 || { on_head scontrol -o show job "$id"; tail -n 8 "$GOS_DIR/log/slurmctld.log"; false; }
	on_head sacct -j "$id" -X -D -o JobID,State,AdminComment%300
	records "$id" | python3 -c '
import json, sys
[o] = json.load(sys.stdin)
assert o["run"] == 0 and o["n"] == 3 and o["parts"] == 2 and o["missing"] == "n3", o'
	python3 - "$GOS_DIR/nodes/n1/reports/job-$id.run-0.jobwide.json" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))
assert sorted(p["node"] for p in f["parts"]) == ["n1", "n2"] and f["missing"] == ["n3"], f
PY
	on_head scancel "$id"
	job_end "$id"
	node_up n3
	wait_until 60 all_idle
	# The failed node's restarted daemon holds no stale job. Its epilog may
	# say so; if not (slurmd starts before the daemon here), the reconciler
	# does, within its grace from the registration and its period (30 s and
	# 5 s, cluster.bash): a bound that holds however fast Slurm was.
	wait_until 40 eval "[ \"\$(ctl_on n3 --json jobs)\" = '[]' ]" ||
		{ on_head scontrol -o show job "$id" | grep -o 'JobState=[^ ]*'; tail -n 12 "$GOS_DIR/log/gpuoversubd.n3.log"; false; }
}

# The writer's node fails (NODE_FAIL; --no-requeue): the others' parts
# reach the successor, n2, after jobwide.failover_after (5 s here); at the
# end of its wait n2 asks slurmctld, finds n1 down, and writes the run's
# record itself, n1 named missing (docs/jobwide.md, "Failures"). Beside it,
# a two-node job: n2 holds only its own part, which n1 never took, so it
# writes that run's record too.
@test "the writer's node killed: its successor writes the run's record, the writer named missing" {
	local id two
	id=$(job_on 3 60 --gres=shard:1 --no-requeue)
	two=$(job_on 2 60 --gres=shard:1 --no-requeue -w "n[1-2]")
	for n in n1 n2 n3; do wait_until 30 eval "[ -n \"\$(weights_on $n $id)\" ]"; done
	for n in n1 n2; do wait_until 30 eval "[ -n \"\$(weights_on $n $two)\" ]"; done
	node_fail n1
	wait_until 120 eval 'has_records "$id" 1 && has_records "$two" 1' || {
		on_head scontrol -o show job "$id"; tail -n 8 "$GOS_DIR/log/gpuoversubd.n2.log" "$GOS_DIR/log/gpuoversubd.n3.log"; false; }
	on_head sacct -j "$id,$two" -X -D -o JobID,State,AdminComment%300
	records "$id" | python3 -c '
import json, sys
[o] = json.load(sys.stdin)
assert o["run"] == 0 and o["writer"] == "n2" and o["n"] == 3 and o["parts"] == 2 and o["missing"] == "n1", o'
	records "$two" | python3 -c '
import json, sys
[o] = json.load(sys.stdin)
assert o["writer"] == "n2" and o["n"] == 2 and o["parts"] == 1 and o["missing"] == "n1", o'
	python3 - "$GOS_DIR/nodes/n2/reports/job-$id.run-0.jobwide.json" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))
assert sorted(p["node"] for p in f["parts"]) == ["n2", "n3"] and f["missing"] == ["n1"], f
PY
	grep -F "job-wide: job $id run 0: the writer n1 is down (slurmctld): this node, its successor, writes the record" \
		"$GOS_DIR/log/gpuoversubd.n2.log"
	node_up n1
	wait_until 60 all_idle
	# n1 back: it never expected the runs, so nothing writes them again.
	has_records "$id" 1 && has_records "$two" 1
}

# Issue 30: n1's door, as the writer of a run of n[1-2], takes only what
# root on a node of the run seals for that node, sent from that node's
# NodeAddr (slurmctld's node table), from a reserved port; each other frame
# is refused, or
# answered busy where it may pass later (an address that is not the
# node's: the table is read again), and logged by n1 with the peer.
@test "the writer's door refuses forged parts: a user's seal, a node outside the run, root on another node or on the head" {
	local id=990001 s=1733140000 send=$GOS_BUILD/tests/tools/gos_jobwide_send n1 out
	n1=$(node_ip n1)
	part() { echo "{\"node\":\"$1\",\"run\":0,\"gpus\":[],\"peak_dev\":0,\"peak_host\":0,\"evicted\":0,\"returned\":0,\"oversub_s\":0,\"p99_us\":0,\"end\":\"\"}"; }
	run on_node n1 "$send" end "$GOS_SOCK" "$GOS_MUNGE_SOCK" "$id" 0 "$s" 2 n1 "n[1-2]" -
	echo "$output"
	[ "$output" = "ok $s 0" ]
	# What nobody runs is copied where nobody can reach it (CI builds in /root).
	install -d -m 0755 "$GOS_DIR/nobody" && install -m 0755 "$send" "$GOS_DIR/nobody/"
	# A user's connection, from a port above 1023, is closed at accept.
	run on_node n2 setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$GOS_DIR/nobody/gos_jobwide_send" door "$n1" 6828 - "$GOS_MUNGE_SOCK" "$id" 0 "$s" n2 n1 "$(part n2)"
	echo "nobody on n2: $output"
	[[ "$output" == "busy: "*" (from an unreserved port: this daemon may not bind a port below 1024 (give it CAP_NET_BIND_SERVICE))" ]]
	# Sealed by nobody, sent by root: busy until n1 has read the node
	# table, which the first part asks for. Refusals before munged opens a
	# part are unsealed, and no sender believes them (issue 50).
	wait_until 60 eval 'out=$(on_node n2 "$send" door "$n1" 6828 - "$GOS_MUNGE_SOCK" "$id" 0 "$s" n2 n1 "$(part n2)" \
		"$(id -u nobody)"); [ "$out" != "busy: busy" ]'
	echo "sealed by nobody on n2: $out"
	[ "$out" = "busy: refused not_root, unsealed: not believed, tried again" ]
	run on_node n3 "$send" door "$n1" 6828 - "$GOS_MUNGE_SOCK" "$id" 0 "$s" n3 n1 "$(part n3)"
	echo "root on n3 as n3: $output"
	[ "$output" = "busy: refused not_member, unsealed: not believed, tried again" ]
	run on_node n3 "$send" door "$n1" 6828 - "$GOS_MUNGE_SOCK" "$id" 0 "$s" n2 n1 "$(part n2)"
	echo "root on n3 as n2: $output"
	[[ "$output" == busy:* ]]
	run on_head "$send" door "$n1" 6828 - "$GOS_MUNGE_SOCK" "$id" 0 "$s" n2 n1 "$(part n2)"
	echo "root on the head as n2: $output"
	[[ "$output" == busy:* ]]
	# n2's own, from n2: taken.
	run on_node n2 "$send" door "$n1" 6828 - "$GOS_MUNGE_SOCK" "$id" 0 "$s" n2 n1 "$(part n2)"
	echo "root on n2 as n2: $output"
	[ "$output" = taken ]
	local log=$GOS_DIR/log/gpuoversubd.n1.log
	grep -F "job-wide door: unreserved_port from $(node_ip n2)" "$log"
	grep -F "job-wide door: not_root from $(node_ip n2) claiming node n2 for job $id" "$log"
	grep -F "job-wide door: not_member from $(node_ip n3) claiming node n3 for job $id" "$log"
	grep -F "job-wide door: busy_not_its_address from $(node_ip n3) claiming node n2 for job $id" "$log"
}

# Issue 50, finding 5: a part is saved before the epilog is answered. n3's
# part waits in its outbox (the writer n1 has not heard of the run yet, and
# answers busy) when n3's daemon is killed; restarted, it sends the part on,
# n1's run holds it once n1's own epilog comes, and n3's saved copy goes.
@test "a sender's daemon killed with its part unsent sends it after its restart" {
	local id=990002 s=1733150000 send=$GOS_BUILD/tests/tools/gos_jobwide_send
	local saved=$GOS_DIR/nodes/n3/state/jobwide-outbox-$id-$s.json journal=$GOS_DIR/nodes/n1/state/jobwide-$id-$s.jsonl
	part() { echo "{\"node\":\"$1\",\"run\":0,\"gpus\":[],\"peak_dev\":0,\"peak_host\":0,\"evicted\":3,\"returned\":0,\"oversub_s\":0,\"p99_us\":0,\"end\":\"\"}"; }
	run on_node n3 "$send" end "$GOS_SOCK" "$GOS_MUNGE_SOCK" "$id" 0 "$s" 3 n3 "n[1-3]" "$(part n3)"
	echo "$output"
	[ "$output" = "ok $s 0" ]
	test -s "$saved"
	node_daemon_kill n3 KILL
	node_daemon_start n3
	wait_until 10 grep -q "job-wide: job $id: this node's part, saved before the restart, goes on" \
		"$GOS_DIR/log/gpuoversubd.n3.log"
	run on_node n1 "$send" end "$GOS_SOCK" "$GOS_MUNGE_SOCK" "$id" 0 "$s" 3 n1 "n[1-3]" "$(part n1)"
	echo "$output"
	[ "$output" = "ok $s 0" ]
	wait_until 60 grep -q '"node":"n3"' "$journal" || { cat "$journal"; tail -n 20 "$GOS_DIR/log/gpuoversubd.n3.log"; false; }
	wait_until 30 eval '[ ! -e "$saved" ]'
}
