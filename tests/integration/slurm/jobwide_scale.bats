#!/usr/bin/env bats
# Issue 30, step 8: the benchmark's 256-node run on every `make check`
# (bench/bench_jobwide.sh, which starts and stops a Slurm with accounting
# of its own): every part kept, the record small and whole in sacct, and
# few controller RPCs. Its time is stated by the bench, never asserted
# here. Needs root.

@test "a 256-node run's job-wide record: all parts, <= 16 KiB, whole in sacct, <= 10 controller RPCs" {
	export BUILD=${BUILD:-build} GOS_BENCH_LOG=$BATS_TEST_TMPDIR/gpuoversubd.log
	run bench/bench_jobwide.sh 256
	echo "$output"
	shown() { echo "the daemon's log, its end:"; tail -n 30 "$GOS_BENCH_LOG"; false; }
	[ "$status" -eq 0 ] || shown
	local line
	line=$(grep '^jobwide N=256:' <<<"$output") || shown
	[[ $line =~ kept\ ([0-9]+)/256\ parts,\ record\ ([0-9]+)\ bytes,\ accounting\ whole:\ ([a-z]+),\ controller\ RPCs\ ([0-9]+), ]] || shown
	[ "${BASH_REMATCH[1]}" -eq 256 ] && [ "${BASH_REMATCH[2]}" -le 16384 ] && [ "${BASH_REMATCH[3]}" = yes ] &&
		[ "${BASH_REMATCH[4]}" -le 10 ] || shown
}

# 5% of the nodes never send: the record names each of them missing, by
# name (the bench checks them against the ones it left silent), and keeps
# the others' parts.
@test "a 256-node run with 5% of its nodes silent: the record names each of them missing" {
	export BUILD=${BUILD:-build} GOS_BENCH_LOG=$BATS_TEST_TMPDIR/gpuoversubd.log
	run bench/bench_jobwide.sh 256 --silent 5
	echo "$output"
	[ "$status" -eq 0 ] || { tail -n 30 "$GOS_BENCH_LOG"; false; }
	grep -q '^jobwide N=256: kept 244/256 parts, record [0-9]* bytes, accounting whole: yes,' <<<"$output"
}
