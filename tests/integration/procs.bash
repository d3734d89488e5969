# Sourced by the harnesses that start daemons and jobs. Nothing is killed by
# name: another test's or the site's munged, slurmd or mariadbd of the same
# name must stay. What a harness starts carries a mark in its environment,
# GOS_MARK=<the harness's directory>, which every descendant inherits
# (slurmstepd, MPI ranks); the harness ends those pids and no other.
#   marked_pids MARK         pids whose environment holds GOS_MARK=MARK
#   kill_marked MARK         SIGKILLs them and waits until they are gone
#   uid_pids UID             pids whose real uid is UID (a user the test made),
#                            under this root directory: a suite running at
#                            once in another Debian root (CI) may have made
#                            a user of the same uid there
#   kill_pids PID...         SIGTERM, then SIGKILL what is left after 5 s

source "$(dirname "${BASH_SOURCE[0]}")/wait.bash"

marked_pids() {
	local env pid
	[ -n "$1" ] || return 0
	for env in /proc/[0-9]*/environ; do
		pid=${env#/proc/}; pid=${pid%/environ}
		[ "$pid" = $$ ] || [ "$pid" = "$BASHPID" ] && continue
		grep -qzx "GOS_MARK=$1" "$env" 2>/dev/null && echo "$pid"
	done
	return 0
}

uid_pids() {
	local status pid root
	root=$(stat -Lc %d:%i /)
	for status in /proc/[0-9]*/status; do
		pid=${status#/proc/}; pid=${pid%/status}
		[ "$(awk '/^Uid:/ {print $2}' "$status" 2>/dev/null)" = "$1" ] &&
			[ "$(stat -Lc %d:%i "/proc/$pid/root" 2>/dev/null)" = "$root" ] && echo "$pid"
	done
	return 0
}

gone() {
	local pid
	for pid; do kill -0 "$pid" 2>/dev/null && return 1; done
	return 0
}

kill_pids() {
	[ $# -gt 0 ] || return 0
	kill "$@" 2>/dev/null
	wait_until 5 gone "$@" 2>/dev/null || { kill -9 "$@" 2>/dev/null; wait_until 5 gone "$@"; }
	return 0
}

kill_marked() {
	local pids
	pids=$(marked_pids "$1")
	[ -n "$pids" ] || return 0
	# shellcheck disable=SC2086
	kill -9 $pids 2>/dev/null
	# shellcheck disable=SC2086
	wait_until 5 gone $pids
}
