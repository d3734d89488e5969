# Sourced by the hostile-neighbour suite (tests/integration/hostile/*.bats):
# ordinary local users of its own, who attack a real gpuoversubd the way any
# user of a shared GPU node could. The suite runs as root, as CI does.
#   neighbours_up             creates users gos-nb1 and gos-nb2 (no home, no
#                             login shell), removing leftovers of a killed run
#   as_neighbour N CMD...     runs CMD as gos-nbN, with that user's groups
#   neighbour_uid N           prints gos-nbN's uid
#   for_neighbours FILE...    copies the FILEs of the tree to where they can
#                             run or read them, each at its place in the
#                             tree, and prints the first one's copy: the
#                             checkout may sit where they cannot
#                             (a 0700 home, /root), and a neighbour who cannot
#                             run the attack must not pass for one refused
#   neighbours_down           kills every process of theirs and removes them
#                             and the copies
# Call neighbours_down from teardown: a test that fails must not leave users.

source "$(dirname "${BASH_SOURCE[0]}")/../procs.bash"

NEIGHBOURS=(gos-nb1 gos-nb2)

neighbours_down() {
	local user pids
	for user in "${NEIGHBOURS[@]}"; do
		id "$user" >/dev/null 2>&1 || continue
		# A run cut off (kill -9 of bats) may leave a user with no process:
		# kill with no pid is a usage error that would fail the setup.
		pids=$(uid_pids "$(id -u "$user")")
		# shellcheck disable=SC2086
		[ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
		# A process killed just now may still own the user until reaped.
		wait_until 10 eval '[ -z "$(uid_pids "$(id -u "$user")")" ]'
		userdel "$user" 2>/dev/null || userdel -f "$user"
	done
	[ -z "${NEIGHBOUR_FILES:-}" ] || rm -rf "$NEIGHBOUR_FILES"
	NEIGHBOUR_FILES=
}

neighbours_up() {
	local user
	neighbours_down
	for user in "${NEIGHBOURS[@]}"; do
		useradd --no-create-home --shell /usr/sbin/nologin --user-group "$user"
	done
	NEIGHBOUR_FILES=$(mktemp -d /tmp/gos-neighbours-XXXXXX)
	chmod 755 "$NEIGHBOUR_FILES"
}

for_neighbours() {
	local tree f rel first=
	tree=$(realpath "${BASH_SOURCE[0]%/*}/../../..")
	for f; do	# at its place in the tree, for what finds its files from there
		rel=$(realpath --relative-to="$tree" "$f")
		[[ $rel != ../* ]] || rel=$(basename "$f")
		mkdir -p "$NEIGHBOUR_FILES/$(dirname "$rel")" && cp "$f" "$NEIGHBOUR_FILES/$rel" || return 1
		first=${first:-$NEIGHBOUR_FILES/$rel}
	done
	chmod -R a+rX "$NEIGHBOUR_FILES" && echo "$first"
}

neighbour_uid() {
	id -u "gos-nb$1"
}

as_neighbour() {
	local user=gos-nb$1
	shift
	setpriv --reuid="$user" --regid="$user" --init-groups --reset-env -- "$@"
}
