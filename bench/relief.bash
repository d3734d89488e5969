# Sourced by the pressure-relief benchmarks, bench/bench_evict.sh on the
# fake driver and tests/integration/gpu/run.sh --bench on a GPU: job 1 holds
# N MiB, job 2 allocates M MiB (gos_testapp's press), and the time until
# job 2's memory is all on the device. The caller defines the functions
# holder and presser, each running gos_testapp as a task of job 1 or 2, and
# $work; answer_s bounds the wait for each answer (default 60 s).
# shellcheck shell=bash disable=SC2154 # $work is the caller's; start sets NAME_in, NAME_out, NAME_pid

# start NAME CMD...: CMD on FIFOs in $work, its fds in NAME_in and NAME_out,
# its pid in NAME_pid; returns once it says it is ready.
start() {
	local name=$1 fd
	shift
	rm -f "$work/$name.in" "$work/$name.out"
	mkfifo "$work/$name.in" "$work/$name.out"
	"$@" <"$work/$name.in" >"$work/$name.out" 2>>"${LOG:-/dev/null}" &
	printf -v "${name}_pid" %s "$!"
	exec {fd}>"$work/$name.in"
	printf -v "${name}_in" %s "$fd"
	exec {fd}<"$work/$name.out"
	printf -v "${name}_out" %s "$fd"
	read -r -t "${answer_s:-60}" -u "$fd" fd	# ready
}

ask() {	# ask FD_IN FD_OUT LINE: one command, its reply
	echo "$3" >&"$1"
	local reply
	read -r -t "${answer_s:-60}" -u "$2" reply
	echo "$reply"
}

# relief_us N_MIB PIECE_MIB M_MIB LIMIT_MS: job 1 allocates N_MIB in pieces,
# job 2 presses M_MIB; prints job 2's time in microseconds, or fails.
relief_us() {
	local n=$1 piece=$2 m=$3 limit=$4 i reply
	start held holder
	for ((i = 1; i <= n / piece; i++)); do
		reply=$(ask "$held_in" "$held_out" "alloc h$i $piece")
		[ "$reply" = ok ] || { echo "job 1 could not allocate h$i ($piece MiB): $reply" >&2; return 1; }
	done
	start pressing presser
	reply=$(ask "$pressing_in" "$pressing_out" "press p $m $limit")
	ask "$pressing_in" "$pressing_out" quit >/dev/null
	ask "$held_in" "$held_out" quit >/dev/null
	exec {held_in}>&- {held_out}<&- {pressing_in}>&- {pressing_out}<&-
	wait "$held_pid" "$pressing_pid"
	case $reply in
	"ok "*) echo $((${reply#ok } / 1000)) ;;
	*) echo "job 2 was not relieved within $limit ms: $reply" >&2; return 1 ;;
	esac
}

# quantile Q: the Q-quantile (nearest rank) of the numbers on stdin.
quantile() {
	tr ' ' '\n' | sort -n | awk -v q="$1" 'NF {v[++n] = $1} END {r = int(q * n); if (r < q * n) r++; print v[r < 1 ? 1 : r]}'
}

ms() { awk -v us="$1" 'BEGIN {printf "%.1f", us / 1000}'; }	# microseconds as ms, one decimal
