#!/usr/bin/env bash
# Runs test programs and bats files, keeps each one's log, and ends with the
# line CI reads: "N passed, N failed". Boost.Test programs count per test
# case; bats files count per test, and a skipped test counts as neither
# (each skip is listed with its reason, and the line before says how
# many).
#
# Two files run at once, started in order; each file's lines are printed
# whole when it ends. The files wait mostly on daemons and deadlines, so the
# second uses a core the first leaves idle: on 2 cores, the sanitizer suite
# took 7 minutes where one at a time takes 11 or more. GOS_TEST_JOBS=N runs
# N at once (1: one at a time). Files that share something machine-wide
# never overlap: the hostile-neighbour suites create and remove the same
# two users (hostile.bash).
set -u
build=$1; shift
logs=$build/test-logs
mkdir -p "$logs"
jobs=${GOS_TEST_JOBS:-2}
[[ $jobs =~ ^[1-9][0-9]?$ ]] || { echo "GOS_TEST_JOBS=$jobs: give how many test files may run at once, 1 to 99" >&2; exit 2; }

# The machine-wide thing file $1 shares with others, or the file itself.
shares() { if [[ $1 == */hostile/* ]]; then echo hostile-users; else echo "$1"; fi; }

# run_one FILE: runs it, prints its lines and leaves "passed failed
# skipped" in its log's .counts.
run_one() {
	local t=$1 name log start s=0 p f rc ms secs
	name=$(basename "$t")
	log=$logs/$name.log
	start=$(date +%s%N)
	if [[ $t == *.bats ]]; then
		# --verbose-run: the output of every `run` shows when its test fails.
		BUILD=$build bats --tap --verbose-run "$t" >"$log" 2>&1
		rc=$?
		s=$(grep -c '^ok .* # skip' "$log")
		p=$(($(grep -c '^ok ' "$log") - s)); f=$(grep -c '^not ok ' "$log")
	else
		"$t" --report_level=short >"$log" 2>&1
		rc=$?
		p=$(sed -n 's/.* \([0-9]\+\) test cases\? out of [0-9]\+ passed.*/\1/p' "$log" | head -1)
		f=$(sed -n 's/.* \([0-9]\+\) test cases\? out of [0-9]\+ failed.*/\1/p' "$log" | head -1)
		p=${p:-0}; f=${f:-0}
		# All passed: Boost prints only the passed count.
		if [ "$rc" -eq 0 ] && [ "$p" -eq 0 ]; then
			p=$(sed -n 's/.*has passed with:.*/x/p' "$log" | wc -l)
		fi
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1	# crashed or aborted before reporting
	fi
	ms=$((($(date +%s%N) - start) / 1000000))
	secs=$((ms / 1000)).$(((ms % 1000) / 100))
	if [ "$rc" -eq 0 ]; then
		printf 'PASS %-32s %3d cases  %6ss%s\n' "$name" "$p" "$secs" "$([ "$s" -eq 0 ] || echo ", $s skipped")"
		# Each skip says why, here and not only in the log.
		grep '^ok .* # skip' "$log" | sed 's/^ok [0-9]* /    skipped: /'
	else
		printf 'FAIL %-32s %3d passed %3d failed  (log: %s)\n' "$name" "$p" "$f" "$log"
		tail -n 30 "$log" | sed 's/^/    /'
	fi >"$log.lines"
	flock "$logs/.print.lock" cat "$log.lines"	# whole, between other lanes' lines
	echo "$p $f $s" >"$log.counts"
}

# Starts files in order as lanes and their shared things come free.
declare -A running=()	# pid -> what its file shares
busy() { local g; for g in "${running[@]}"; do [ "$g" = "$1" ] && return 0; done; return 1; }
queue=()
for t in "$@"; do
	[ -e "$t" ] || continue
	queue+=("$t")
	rm -f "$logs/$(basename "$t").log.counts"	# an earlier run's
done
files=("${queue[@]}")
while [ "${#queue[@]}" -gt 0 ] || [ "${#running[@]}" -gt 0 ]; do
	for i in "${!queue[@]}"; do
		[ "${#running[@]}" -lt "$jobs" ] || break
		g=$(shares "${queue[$i]}")
		busy "$g" && continue
		run_one "${queue[$i]}" &
		running[$!]=$g
		unset "queue[$i]"
	done
	wait -n -p ended
	unset "running[$ended]"
done

passed=0 failed=0 skipped=0
for t in "${files[@]}"; do
	counts=$logs/$(basename "$t").log.counts
	read -r p f s <"$counts" 2>/dev/null || { p=0 f=1 s=0; echo "FAIL $(basename "$t"): no result"; }
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
done
[ "$skipped" -eq 0 ] || echo "$skipped skipped (each said why above)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
