#!/usr/bin/env bash
# bench_jobwide.sh N [--silent PCT] [--results PATH]: the job-wide record
# of an N-node run (issue 30, docs/jobwide.md "How it is proved"), through
# the real code against a real slurmctld, slurmd, slurmdbd and MariaDB (the
# test Slurm of tests/integration/slurm/harness.bash) and one real
# gpuoversubd, node1's, the run's writer. slurm.conf also names
# b[0001-N-1], FUTURE nodes each with a NodeAddr of its own on loopback
# (all of 127/8 is local). A real one-node job ends; as root, the bench
# plays node1's epilog (gos_jobwide_send end) with SLURM_NODELIST
# node1,b[0001-N-1], then gos_jobwide_nodes seals the N-1 other parts with
# munged and sends them at once through the daemon's send_frame, each from
# its node's address, to node1's door. Prints
#   jobwide N=<n>: kept <k>/<n> parts, record <bytes> bytes, accounting whole: yes|no, controller RPCs <r>, <seconds> s
# k: the record's "parts" as sacct shows it; bytes: its gpuoversub=
# segment; whole: sacct's field is the job-wide file's "field", byte for
# byte; r: slurmctld's RPCs (sdiag, less its own REQUEST_STATS_INFO) from
# before the run end to after the record is in sacct; seconds: from the
# last part taken (or the send start) to the record seen in sacct. Then a
# line with slurmdbd's RPCs (sacctmgr show stats) over the same span.
# Targets at N=1024: k=n, <= 16384 bytes, whole, r <= 10, <= 10 s; all but
# the time make the exit status. --silent PCT leaves that share of the
# simulated nodes unsent: the record must name them missing, and no other
# (the writer waits 5 s for them).
# GOS_BENCH_LOG=PATH keeps the daemon's log there (the rest goes). Needs root.
set -euo pipefail
usage="usage: bench_jobwide.sh N [--silent PCT] [--results PATH]"
n=${1:?$usage}; shift
[[ $n =~ ^[1-9][0-9]*$ && $n -le 9999 ]] || { echo "$usage (N from 1 to 9999)" >&2; exit 2; }
silent=0 results=
while [ $# -gt 0 ]; do
	case $1 in
	--silent) silent=${2:?$usage}; shift 2 ;;
	--results) results=${2:?$usage}; shift 2 ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
export BUILD=${BUILD:-build}
here=$(dirname "$0")
# shellcheck source=tests/integration/slurm/harness.bash
source "$here/../tests/integration/slurm/harness.bash"

# The counts by message type of `sdiag` or `sacctmgr show stats`, "KIND
# COUNT" a line, less those of KIND $1: the asking itself.
by_type() {
	awk -v skip="$1" '
		/by message type/ { on = 1; next }
		on && !/^[ \t]/ { on = 0 }
		on && $1 != skip && match($0, /count:[0-9]+/) { print $1, substr($0, RSTART + 6, RLENGTH - 6) }'
}
ctld_rpcs() { sdiag | by_type REQUEST_STATS_INFO; }
dbd_rpcs() { sacctmgr show stats | by_type DBD_GET_STATS; }
# What came between readings $1 and $2: "TOTAL KIND N, KIND N...".
delta() {
	awk 'NR == FNR { before[$1] = $2; next }
	     $2 > before[$1] { d = $2 - before[$1]; sum += d; kinds = kinds (kinds ? ", " : "") $1 " " d }
	     END { print sum + 0, kinds }' <(echo "$1") <(echo "$2")
}

export GOS_SLURM_PORT GOS_ACCOUNTING=1 GOS_SLURM_CONF_EXTRA=
GOS_SLURM_PORT=$(slurm_free_port)
# Simulated node I (1 to N-1): bI, four digits, at its own NodeAddr.
nodes=
for ((i = 1; i < n; i++)); do
	printf -v name 'b%04d' "$i"
	addr=127.1.$((i / 250)).$((i % 250 + 1))
	nodes+="$name $addr"$'\n'
	GOS_SLURM_CONF_EXTRA+="NodeName=$name NodeHostname=localhost NodeAddr=$addr CPUs=1 RealMemory=100 State=FUTURE"$'\n'
done
nodelist=node1
[ "$n" -eq 1 ] || nodelist+=",b[0001-$(printf %04d $((n - 1)))]"
[ "$n" -ne 2 ] || nodelist=node1,b0001

dir=$(mktemp -d /tmp/gos-bench-jobwide-XXXXXX)
# All of it, whatever failed (set -e stops at a pid that is gone already).
keep_log() { [ -z "${GOS_BENCH_LOG:-}" ] || cp "$GOS_DIR/log/gpuoversubd.log" "$GOS_BENCH_LOG" 2>/dev/null || true; }
trap 'keep_log; slurm_teardown || true' EXIT
trap 'exit 1' INT TERM
slurm_up "$dir" 3>&- >/dev/null
{ sacctmgr -i add account bench && sacctmgr -i add user root account=bench; } >/dev/null
# node1's daemon writes records itself (it is root); no Slurm facts read
# meanwhile, whose RPCs would count; the writer waits for the silent ones.
port=$(slurm_free_port)
sed -i 's/admin_comment: false/admin_comment: true/' "$GOS_DIR/gpuoversub.yaml"
printf 'slurm_weights: {refresh: 1h}\njobwide: {port: %s, listen: 127.0.0.1, wait: %s, send_for: 2m, record_helper: direct, munge_socket: %s}\n' \
	"$port" "$([ "$silent" = 0 ] && echo 60s || echo 5s)" "$GOS_MUNGE_SOCK" >>"$GOS_DIR/gpuoversub.yaml"
gos_daemon_stop
gos_daemon_start
slurm_job_env

id=$(sbatch --parsable -o "$GOS_DIR/out-%j.txt" --wrap true)
job_completed "$id" >&2
start=$(date -d "$(scontrol show job "$id" | grep -o 'StartTime=[^ ]*' | cut -d= -f2)" +%s)
own='{"node":"node1","run":0,"gpus":["0000:17:00.0"],"peak_dev":1000,"peak_host":0,"evicted":0,"returned":0,"oversub_s":1,"p99_us":9,"end":""}'
log=$GOS_DIR/log/gpuoversubd.log

ctld_before=$(ctld_rpcs) dbd_before=$(dbd_rpcs)
ended=$("$GOS_BUILD/tests/tools/gos_jobwide_send" end "$GOS_SOCK" "$GOS_MUNGE_SOCK" "$id" 0 "$start" "$n" node1 \
	"$nodelist" "$own") || { echo "the run end was not taken: $ended" >&2; exit 1; }
launched=$(date +%s.%N)
sent=$("$GOS_BUILD/tests/tools/gos_jobwide_nodes" 127.0.0.1 "$port" "$GOS_MUNGE_SOCK" "$id" 0 "$start" node1 \
	--silent "$silent" --for 100 <<<"$nodes" 2>"$GOS_DIR/nodes.err") || {
	echo "not every part was taken: $sent" >&2; cat "$GOS_DIR/nodes.err" >&2; tail -n 20 "$log" >&2; exit 1; }
# The last part taken, or the send start, from the tool's own clock.
read -r sealed_s quiet last_s < <(sed -n 's/^sealed [0-9]* in \([0-9.]*\) s;.* silent \([0-9]*\); last taken \([0-9.]*\) s$/\1 \2 \3/p' <<<"$sent")
from=$(awk -v l="$launched" -v s="$sealed_s" -v t="$last_s" 'BEGIN { printf "%.3f", l + s + t }')

polls=0
field() { sacct -j "$id" -X -D -n -P -o AdminComment | grep -F '"gos":3' | grep -o 'gpuoversub=.*'; }
seen() { polls=$((polls + 1)); field >/dev/null || { sleep 0.2; false; }; }
wait_until 120 seen || { echo "no record in sacct" >&2; tail -n 20 "$log" >&2; exit 1; }
seconds=$(awk -v f="$from" -v t="$(date +%s.%N)" 'BEGIN { printf "%.2f", t - f }')
read -r ctld ctld_kinds < <(delta "$ctld_before" "$(ctld_rpcs)")
read -r dbd dbd_kinds < <(delta "$dbd_before" "$(dbd_rpcs)")

line=$(field)
file=$GOS_DIR/reports/job-$id.run-0.jobwide.json
wait_until 30 test -s "$file"
read -r k bytes whole missing < <(python3 -c '
import json, sys
line, file = sys.argv[1], json.load(open(sys.argv[2]))
record = json.loads(line[len("gpuoversub="):])
print(record["parts"], len(line.encode()), "yes" if file["field"] == line else "no", record["missing"] or "-")' "$line" "$file")
# The record names the silent nodes missing, each by name, and no other.
named=yes
if [ "$quiet" != 0 ] || [ "$missing" != - ]; then
	[ "$missing" != - ] && [ "$("$BUILD/tests/tools/gos_hostlist" expand "$missing" | sort)" = \
		"$(sed -n 's/^silent //p' <<<"$sent" | tr ' ' '\n' | sort)" ] || named=no
fi

result="jobwide N=$n: kept $k/$n parts, record $bytes bytes, accounting whole: $whole, controller RPCs $ctld, $seconds s"
dbd_line="slurmdbd RPCs $dbd ($dbd_kinds; the bench's $polls sacct reads among them); controller's: ${ctld_kinds:-none}; parts sealed in $sealed_s s, all taken $last_s s after the send start"
echo "$result"
echo "$dbd_line"

# The silent nodes are missing, and no other.
verdict=$(awk -v k="$k" -v e="$((n - quiet))" -v b="$bytes" -v w="$whole" -v r="$ctld" -v s="$seconds" -v m="$named" 'BEGIN {
	ok = k == e && b <= 16384 && w == "yes" && r <= 10 && m == "yes"
	print (ok ? "meets" : "MISSES") " k=" e ", <= 16384 bytes, whole, r <= 10, the silent named missing" (s <= 10 ? "; meets" : "; MISSES") " <= 10 s" }')
if [ -n "$results" ]; then
	load=$(cut -d' ' -f1 /proc/loadavg)
	cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
	python3 "$here/results_section.py" "$results" "bench_jobwide_$n" "## Job-wide record at N=$n, $(date +%F)

Machine: $(nproc) x $cpu, load average $load at the end. Real slurmctld, slurmd, slurmdbd and MariaDB (Slurm $(sinfo -V | cut -d' ' -f2)), one real
gpuoversubd writing; $((n - 1)) simulated nodes' parts sealed by munged and sent at once through the daemon's
send_frame, each from its own loopback NodeAddr. \`bench/bench_jobwide.sh $n\`.

    $result
    $dbd_line

Targets (N=1024): k=n, record <= 16384 bytes, accounting whole, controller RPCs <= 10, <= 10 s: $verdict."
fi
[[ $verdict == meets* ]]
