#!/usr/bin/env bats
# Jobs that span nodes, in a real three-node Slurm on this machine
# (cluster.bash): each node in its own namespaces with its own gpuoversubd
# and two simulated GPUs. Every node's epilog update of AdminComment is
# forced to race the others' (GOS_TEST_COMMENT_PAUSE_MS in slurmd's
# environment widens each node's read-to-write window). Needs root.

load ../wait

setup_file() {
	export BUILD=${BUILD:-build}
	source tests/integration/multinode/cluster.bash
	export GOS_SLURM_PORT=$((20000 + RANDOM % 20000)) GOS_TEST_COMMENT_PAUSE_MS=300
	dir=$(mktemp -d /tmp/gos-multi-XXXXXX)
	cluster_up "$dir" report_admin_comment=yes 3>&- || { cluster_down; return 1; }
	export LD_LIBRARY_PATH=$GOS_BUILD/tests/fakecuda FAKECUDA_MEMORY=256M FAKECUDA_DEVICES=2 \
		FAKECUDA_STATE=$GOS_DIR/node/fakecuda.state ASAN_OPTIONS=verify_asan_link_order=0
}

teardown_file() {
	source tests/integration/multinode/cluster.bash
	cluster_down
	rm -rf "$GOS_DIR"
}

setup() {
	source tests/integration/multinode/cluster.bash
}

# The segment of job $1's AdminComment, as JSON.
segment() {
	on_head scontrol -o show job "$1" | python3 -c '
import json, sys
line = sys.stdin.read()
print(json.dumps(json.loads(line[line.index("gpuoversub=") + 11:].split(" ")[0])))'
}
# A step's tasks, one per node: two 32 MiB buffers each, written and checked.
two_buffers="printf 'alloc a 32\nalloc b 32\nverify a\nverify b\nquit\n' | $BUILD_ABS/tests/tools/gos_testapp"

@test "a job on three nodes: AdminComment holds each node's part and the totals, and each node reports its own" {
	export BUILD_ABS=$GOS_BUILD
	id=$(on_head sbatch --parsable -N3 --gres=shard:2 --gpu-mem-oversub -o "$GOS_DIR/out-%j.txt" \
		--wrap "srun -N3 --ntasks-per-node=1 bash -c \"printf 'alloc a 32\\nalloc b 32\\nverify a\\nverify b\\nquit\\n' | $GOS_BUILD/tests/tools/gos_testapp\"")
	[ "$(on_head bash -c "source tests/integration/slurm/harness.bash; job_wait $id")" = COMPLETED ]
	cat "$GOS_DIR/out-$id.txt"
	on_head scontrol -o show job "$id" | grep -o 'AdminComment=.*' | cut -c1-2000
	segment "$id" | python3 -c '
import json, sys
o = json.load(sys.stdin)
nodes = sorted(p["node"] for p in o["parts"])
assert nodes == ["n1", "n2", "n3"], o
assert o["missing"] == [] and o["nodes"] == ["n1", "n2", "n3"], o
assert all(p["peak_dev"] == 64 << 20 and p["gpus"] == ["0000:17:00.0"] for p in o["parts"]), o
assert o["peak_dev"] == 3 * (64 << 20), o'
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
	[[ "$output" == *"nodes n1,n2,n3, 1 run(s); no part from: none"* ]]
}
