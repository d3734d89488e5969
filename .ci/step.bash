# Sourced by .ci/readme-path.sh and .ci/release.sh, which set root (the
# bare root) and step_label (what each line starts with).
# step NAME CMD...: runs CMD in the root (.ci/in-root.sh) and says how long
# it took, as "LABEL: NAME: N s (exit RC)"; returns CMD's status.
step() {
	local name=$1 start rc=0
	shift
	start=$(date +%s)
	.ci/in-root.sh "$root" "$@" || rc=$?
	echo "$step_label: $name: $(($(date +%s) - start)) s (exit $rc)"
	return "$rc"
}
