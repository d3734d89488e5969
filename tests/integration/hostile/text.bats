#!/usr/bin/env bats
# Issue 24, findings 7 and 11: text a job chose reaches root's log and
# terminal. A node name with a newline forged a log record of its chosen
# priority; a report's lines after the first lost theirs; ESC and BEL
# reached root's terminal through gpuoversubctl. Names with control
# characters are refused where the daemon takes them, every log line keeps
# its priority, and ctl prints control characters as \xNN.

load ../wait
load ../daemon/daemon

setup() {
	REG=${BUILD:-build}/tests/tools/gos_register
	CTL=${BUILD:-build}/bin/gpuoversubctl
	AGENT=$(realpath "$BATS_TEST_DIRNAME/gos_agent.py")
}

teardown() {
	[ -z "${PID:-}" ] || daemon_down
}

# Lines of the daemon's log without a <N> priority at their start.
unprefixed() { grep -cv '^<[0-7]>' "$D/log" || true; }

@test "a node name with a newline, ESC or BEL is refused, no record is forged, and every log line keeps its priority" {
	daemon_up
	"$REG" "$D/s.sock" step 101 0
	forged=$'node1\n<3>job 101 reaped: root says so'
	run "$REG" "$D/s.sock" exec 101 /usr/bin/python3 "$AGENT" "$D/s.sock" rank "$forged"
	echo "$output"
	[[ "$output" == *"rank -22 a rank needs 0 <= rank, local rank < world size and a NUL-terminated node name of valid UTF-8 without control characters"* ]]
	run "$REG" "$D/s.sock" exec 101 /usr/bin/python3 "$AGENT" "$D/s.sock" rank $'\e]0;root@node\a'
	[[ "$output" == *"rank -22 "* ]]
	run "$REG" "$D/s.sock" exec 101 /usr/bin/python3 "$AGENT" "$D/s.sock" rank node1
	[[ "$output" == *"rank 0 "* ]]	# a plain name is taken
	# The job's end logs its report's summary, several lines.
	"$REG" "$D/s.sock" end 101.0
	"$REG" "$D/s.sock" end 101
	wait_until 10 grep -q "gpuoversub report for job 101" "$D/log"
	echo "log: $(wc -l <"$D/log") lines, $(wc -c <"$D/log") bytes; lines without a priority: $(unprefixed); forged records: $(grep -c '^<3>job 101 reaped' "$D/log")" >&3
	cat "$D/log"	# shown only when the test fails
	! grep -q '^<3>job 101 reaped' "$D/log"
	[ "$(unprefixed)" -eq 0 ]
	grep -q '^<5>  peak on GPU' "$D/log"	# the summary's second line, at its level
}

@test "gpuoversubctl report prints the control characters a stored report holds as \\xNN" {
	daemon_up
	"$REG" "$D/s.sock" step 102 0
	"$REG" "$D/s.sock" end 102.0
	"$REG" "$D/s.sock" end 102
	wait_until 10 test -f "$D/reports/job-102.json"
	# A report a daemon before this fix wrote, names from a job's environment.
	python3 - "$D/reports/job-102.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["partition"], r["account"], r["qos"] = "\x1b]0;root@node\x07", "a\nb", "\x1b[2J"
for w in r["weights"]:
    w["derivation"][0]["why"] = "\x07\r<3>forged"
json.dump(r, open(sys.argv[1], "w"))
PY
	run "$CTL" --socket "$D/s.sock" report 102
	echo "$output" | od -c | head -20	# shown only when the test fails
	[ "$status" -eq 0 ]
	controls=$(printf '%s' "$output" | tr -d '\n' | LC_ALL=C tr -dc '\000-\037\177' | wc -c)
	echo "ctl report: $(printf '%s' "$output" | wc -c) bytes, control characters other than newlines: $controls" >&3
	[ "$controls" -eq 0 ]
	[[ "$output" == *'partition \x1b]0;root@node\x07, account a\x0ab, qos \x1b[2J'* ]]
	[[ "$output" == *'(\x07\x0d<3>forged)'* ]]
}

# Issue 31, finding 3: a node name with a lone 0x9b byte was taken; every
# JSON dump of its job then threw, "cannot save job" was logged every
# second, the report was never written and the job stayed listed after its
# end. Names that are not valid UTF-8, or hold a C1 or bidi control, are
# now refused at both doors that take them.
@test "a node name that is not valid UTF-8 or holds a C1 or bidi control is refused at RANK and RANK_REPORT, and the job ends with its report" {
	daemon_up
	"$REG" "$D/s.sock" step 103 0
	refused=0 tried=0
	for name in $'n\x9b' $'n\xc2\x9b2J' $'n\xc2\x85' $'a\xe2\x80\xaeb' $'\xc0\xaf'; do
		run "$REG" "$D/s.sock" exec 103 /usr/bin/python3 "$AGENT" "$D/s.sock" rank "$name"
		echo "$output"
		[[ "$output" == *"rank -22 "*"valid UTF-8"* ]] && refused=$((refused + 1))
		run "$REG" "$D/s.sock" exec 103 /usr/bin/python3 "$AGENT" "$D/s.sock" rank-reports 1 1 "$name"
		echo "$output"
		[[ "$output" == *"report 0 -22 "*"valid UTF-8"* ]] && refused=$((refused + 1))
		tried=$((tried + 2))
	done
	run "$REG" "$D/s.sock" exec 103 /usr/bin/python3 "$AGENT" "$D/s.sock" rank-reports 1 1 $'gr\xc3\xbcn'
	[[ "$output" == *"report 0 0 "* ]]	# UTF-8 beyond ASCII is a name like any other
	"$REG" "$D/s.sock" end 103.0
	"$REG" "$D/s.sock" end 103
	wait_until 10 test -f "$D/reports/job-103.json"
	python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["mpi_ranks"][0]["node"] == "gr\u00fcn", r["mpi_ranks"]' \
		"$D/reports/job-103.json"
	run "$CTL" --socket "$D/s.sock" jobs
	echo "refused $refused of $tried unsafe names; report written; jobs after the end: $output; 'cannot save' lines: $(grep -c 'cannot save' "$D/log" || true)" >&3
	cat "$D/log"	# shown only when the test fails
	[ "$refused" -eq "$tried" ]
	! grep -q 'cannot save' "$D/log"
	[[ "$output" != *103* ]]
}
