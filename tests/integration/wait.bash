# Sourced by the integration tests and the scripts that drive real
# processes. wait_until SECONDS COMMAND...: runs COMMAND until it succeeds,
# for at most SECONDS; if it never does, says what it waited for and fails.
# Timing-dependent steps wait on a condition this way, never on a sleep.
wait_until() {
	local limit=$1 end=$((SECONDS + $1))
	shift
	until "$@"; do
		if [ "$SECONDS" -ge "$end" ]; then
			echo "waited ${limit}s in vain for: $*" >&2
			return 1
		fi
		sleep 0.05
	done
}

# gpuoversubd_listens SOCKET: whether the daemon serving SOCKET accepts on
# both its sockets. bind() makes a socket's file and listen() comes after,
# so a file alone is no proof (ctl.bats once met "Connection refused" in
# that gap under load); the root socket is the second one it listens on.
gpuoversubd_listens() {
	local root=$1.root	# proto::root_socket_of
	[[ $1 != ?*.sock ]] || root=${1%.sock}.root.sock
	ss -xlH | awk '{ print $5 }' | grep -qxF -- "$root"
}
