# Jobs for the single-node Slurm's suites (harness.bash): scripts that run
# the test program, and what `gpuoversubctl status` says of them.

# job_script NAME N HOLD [PROGRAM...]: a job script whose program (the
# test program, or PROGRAM, a command that runs one) allocates N buffers of
# 32 MiB, holds them HOLD seconds (or until the command HOLD ends), then
# checks them.
job_script() {
	local f=$GOS_DIR/job-$1.sh n=$2 hold=$3 program=("${@:4}")
	[ ${#program[@]} -gt 0 ] || program=("$GOS_BUILD/tests/tools/gos_testapp")
	[[ ! $hold =~ ^[0-9]+$ ]] || hold="sleep $hold"
	cat >"$f" <<SCRIPT
#!/bin/bash
{ for i in \$(seq $n); do echo "alloc b\$i 32"; done; $hold
  for i in \$(seq $n); do echo "verify b\$i"; done; echo quit; } | ${program[*]}
SCRIPT
	echo "$f"
}

submit() { sbatch --parsable -o "$GOS_DIR/out-%j.txt" "$@"; }
ctl() { "$GOS_BUILD/bin/gpuoversubctl" --socket "$GOS_SOCK" "$@"; }
# Whether job $1 is in `gpuoversubctl jobs`, or has a tenant in `status`.
listed() { ctl --json jobs | python3 -c 'import json,sys; sys.exit(0 if any(j["job"] == int(sys.argv[1]) for j in json.load(sys.stdin)) else 1)' "$1"; }
tenant() { ctl --json status | python3 -c 'import json,sys; sys.exit(0 if any(t["job"] == int(sys.argv[1]) for g in json.load(sys.stdin)["gpus"] for t in g["tenants"]) else 1)' "$1"; }
# resident_of JOB: its bytes on the GPU in `status`. settled A B DEMAND:
# both jobs asked for DEMAND bytes, the GPU is full, no eviction is under
# way, and the balloon has found both idle (they launch nothing: each
# within its 8-period window of 4 s, for the rest of their 30 s). Between
# the first's turn and the second's, wider on a loaded machine, only the
# first one's weight is lowered, and the shares are not 3:1 (Debian
# testing's CI run measured 0.75:1 there).
resident_of() { ctl --json status | python3 -c 'import json,sys; print(sum(t["resident"] for g in json.load(sys.stdin)["gpus"] for t in g["tenants"] if t["job"] == int(sys.argv[1])))' "$1"; }
settled() { ctl --json status | python3 -c 'import json,sys; g = json.load(sys.stdin)["gpus"][0]; ts = [t for t in g["tenants"] if t["job"] in (int(sys.argv[1]), int(sys.argv[2]))]; sys.exit(0 if len(ts) == 2 and all(t["demand"] >= int(sys.argv[3]) for t in ts) and all(t["idle"] for t in ts) and not g["evicting"] and sum(t["resident"] for t in ts) >= g["capacity"] - (8 << 20) else 1)' "$@"; }

# shares_as_weights A B: each of jobs A and B is within one chunk (2 MiB,
# the harness's policy) of its weight's share of the GPU, in one status;
# the figures go to stderr.
shares_as_weights() {
	ctl --json status | python3 -c '
import json, sys
g = json.load(sys.stdin)["gpus"][0]
t = {x["job"]: x for x in g["tenants"]}
a, b = t[int(sys.argv[1])], t[int(sys.argv[2])]
cap, w = g["capacity"], a["weight"] + b["weight"]
print("resident: job %d %d, job %d %d of %d; ratio %.3f, weights %.2f:%.2f" % (a["job"], a["resident"], b["job"], b["resident"], cap, a["resident"] / b["resident"], a["weight"], b["weight"]), file=sys.stderr)
for x in (a, b):
	assert abs(x["resident"] - cap * x["weight"] / w) <= 2 << 20, x' "$1" "$2"
}
