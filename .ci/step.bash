# Sourced by .ci/run, .ci/readme-path.sh and .ci/release.sh.
# counted CMD...: runs CMD and leaves in $cpu_used the CPU seconds (user and
# system) it and the processes it waited for took, so that each step's line
# says what it cost CI's cores as well as how long it ran; returns CMD's
# status. CMD keeps the caller's descriptors as they are: a make started
# with two more open takes other numbers for its jobserver, which sub-makes
# under bats then cannot find.
counted() {
	local tally rc=0
	tally=$(mktemp)
	( "$@" && rc=0 || rc=$?
	  read -ra stat </proc/$BASHPID/stat	# fields 16 and 17: waited-for children's CPU
	  echo "$rc $(((stat[15] + stat[16]) / $(getconf CLK_TCK)))" >"$tally"
	  exit "$rc" ) || true
	read -r rc cpu_used <"$tally" || { rc=1 cpu_used='?'; }
	rm -f "$tally"
	return "$rc"
}
# step NAME CMD...: runs CMD in the root (.ci/in-root.sh) and says how long
# it took, as "LABEL: NAME: N s, C s of CPU (exit RC)"; returns CMD's
# status. The caller sets root (the bare root) and step_label (what each
# line starts with).
step() {
	local name=$1 start rc=0
	shift
	start=$(date +%s)
	counted .ci/in-root.sh "$root" "$@" || rc=$?
	echo "$step_label: $name: $(($(date +%s) - start)) s, $cpu_used s of CPU (exit $rc)"
	return "$rc"
}
