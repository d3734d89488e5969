#!/usr/bin/env bash
# make demo: a private single-node Slurm with gpuoversubd and our SPANK
# plugin, two competing jobs submitted with sbatch --gpu-mem-oversub, one
# holding 3 of the GPU's 4 shards and one holding 1, the daemon's view
# while they run (resident 3:1) with `explain` for the first, and their
# eviction reports. Uses the
# machine's GPU when there is one; otherwise simulated GPUs and the
# test-only fake CUDA driver, and says so. Needs root (it starts Slurm).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
export BUILD=${BUILD:-build}
[ "$(id -u)" -eq 0 ] || { echo "make demo starts a private Slurm and must run as root (sudo make demo)"; exit 1; }
for t in slurmctld slurmd sbatch munge; do
	command -v $t >/dev/null || { echo "make demo needs $t (apt-get install slurmctld slurmd slurm-client munge)"; exit 1; }
done
source tests/integration/slurm/harness.bash
source tests/integration/wait.bash
export GOS_SLURM_PORT=$(slurm_free_port)
dir=$(mktemp -d /tmp/gpuoversub-demo-XXXXXX)
trap 'slurm_down; rm -rf "$dir"' EXIT

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
	gpu_mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits -i 0)
	echo "== Real GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader -i 0), $gpu_mib MiB"
	export BUFFER_MIB=1024 BUFFERS=$((gpu_mib * 90 / 100 / 1024)) HOLD=10
	real_gpu=1
else
	echo "== No GPU on this machine: the demo uses a simulated 256 MiB GPU and the test-only fake CUDA driver"
	echo "   (tests/fakecuda), which keeps data in host memory and accounts device residency."
	export BUFFER_MIB=32 BUFFERS=8 HOLD=6
	real_gpu=0
fi
slurm_up "$dir" || exit 1
if [ "$real_gpu" -eq 1 ]; then	# the daemon finds the real GPU itself
	sed -i '/^simulated_gpus:/,$d' "$GOS_DIR/gpuoversub.yaml"
	gos_daemon_stop && gos_daemon_start || exit 1
else
	export LD_LIBRARY_PATH=$GOS_BUILD/tests/fakecuda FAKECUDA_MEMORY=256M FAKECUDA_STATE=$GOS_DIR/fakecuda.state
fi
export GOS_DEMO_APP=$GOS_BUILD/tests/tools/gos_testapp
ctl() { "$GOS_BUILD/bin/gpuoversubctl" --socket "$GOS_SOCK" "$@"; }

echo "== Submitting two jobs that together ask $((2 * BUFFERS * BUFFER_MIB)) MiB of the GPU: shard:3 and shard:1 of 4"
# No cap (the script's factor 2 would cap the shard:1 job at half the GPU).
a=$(sbatch --parsable --gres=shard:3 --gpu-mem-oversub -o "$dir/job-%j.out" examples/demo/oversub-job.sbatch) || exit 1
b=$(sbatch --parsable --gres=shard:1 --gpu-mem-oversub -o "$dir/job-%j.out" examples/demo/oversub-job.sbatch) || exit 1
echo "   jobs $a (shard:3) and $b (shard:1)"
# Both hold all their memory, each at its fair share of the device.
shared_fairly() {
	ctl --json status | python3 -c '
import json, sys
want = int(sys.argv[1]) << 20
tenants = [t for g in json.load(sys.stdin)["gpus"] for t in g["tenants"] if t["demand"]]
fair = all(abs(t["resident"] - t["entitlement"]) <= 64 << 20 for t in tenants)
sys.exit(0 if len(tenants) == 2 and sum(t["demand"] for t in tenants) == want and fair else 1)' \
		$((2 * BUFFERS * BUFFER_MIB))
}
wait_until 120 shared_fairly || echo "   (the jobs did not share the GPU at the same time)"
echo "== gpuoversubctl status"
ctl status
ctl --json status | python3 -c '
import json, sys
r = {t["job"]: t["resident"] for g in json.load(sys.stdin)["gpus"] for t in g["tenants"]}
a, b = int(sys.argv[1]), int(sys.argv[2])
if r.get(a) and r.get(b):
    print("   resident shard:3 / shard:1 = %.2f" % (r[a] / r[b]))' "$a" "$b"
echo "== gpuoversubctl explain $a"
ctl explain "$a"
rc=0
for j in "$a" "$b"; do
	state=$(job_wait "$j" 1200)
	echo "== job $j: $state"
	sed 's/^/   /' "$dir/job-$j.out"
	[ "$state" = COMPLETED ] || rc=1
done
for j in "$a" "$b"; do
	echo "== gpuoversubctl report $j"
	wait_until 30 ctl report "$j" >/dev/null	# the epilog's, once written
	ctl report "$j"
done
exit $rc
