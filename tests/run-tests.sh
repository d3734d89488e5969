#!/usr/bin/env bash
# Runs test programs and bats files, keeps each one's log, and ends with the
# line CI reads: "N passed, N failed". Boost.Test programs count per test
# case; bats files count per test, and a skipped test counts as neither
# (each skip is listed with its reason, and the line before says how
# many).
set -u
build=$1; shift
logs=$build/test-logs
mkdir -p "$logs"
passed=0 failed=0 skipped=0
for t in "$@"; do
	[ -e "$t" ] || continue
	name=$(basename "$t")
	log=$logs/$name.log
	start=$(date +%s%N)
	s=0
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
	fi
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
done
[ "$skipped" -eq 0 ] || echo "$skipped skipped (each said why above)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
