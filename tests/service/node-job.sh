#!/bin/bash
# node-job.sh MIB [detach]: a batch job of the guest's Slurm node
# (tests/service/guest.sh). It writes what it sees of its GPUs, then the
# test program allocates MIB MiB through the agent the SPANK plugin
# preloaded; with "detach", a process that leaves the task's tree (setsid,
# a double fork) allocates 8 MiB more. Both hold until
# /tmp/release-$SLURM_JOB_ID appears, then check their data.
set -u
# The fake driver's device 0 is the job's GPU, as CUDA's is under the
# device constraint: one state file per node GPU.
export LD_LIBRARY_PATH=/opt/gos/fakecuda FAKECUDA_MEMORY=64M FAKECUDA_STATE=/tmp/fakecuda-gpu$SLURM_JOB_GPUS.state
out=/tmp/node-job-$SLURM_JOB_ID
# Each device node's error as the job opens it: EPERM where the job's
# cgroup denies it, ENXIO where it is allowed (no driver here).
{
	echo "gpus=$SLURM_JOB_GPUS cuda=${CUDA_VISIBLE_DEVICES:-}"
	for d in 0 1; do echo "nvidia$d: $(head -c0 /dev/nvidia$d 2>&1 | sed 's/.*: //')"; done
} >"$out.env.part" && mv "$out.env.part" "$out.env"	# whole when it appears
hold="while [ ! -e /tmp/release-$SLURM_JOB_ID ]; do sleep 0.2; done"
[ "${2:-}" != detach ] ||
	setsid -f bash -c "{ echo 'alloc d 8'; $hold; echo 'verify d'; echo quit; } | /opt/gos/gos_testapp >$out.detached 2>&1"
{ echo "alloc a $1"; eval "$hold"; echo "verify a"; echo quit; } | /opt/gos/gos_testapp >"$out.task" 2>&1
# The detached process ends before the job does, which would kill it.
[ "${2:-}" != detach ] || for _ in $(seq 100); do [ "$(grep -c '^ok' "$out.detached")" -ge 3 ] && break; sleep 0.2; done
