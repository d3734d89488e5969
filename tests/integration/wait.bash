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
