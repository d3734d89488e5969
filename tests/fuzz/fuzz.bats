#!/usr/bin/env bats
# A brief run of every libFuzzer target (the decoders, the job-wide codec,
# the daemon's handlers and the engine API);
# `make fuzz FUZZ_RUNS=0` runs them at length.

@test "every fuzz target survives a brief run" {
	run env FUZZ_RUNS=3000 BUILD="${BUILD:-build}" tests/fuzz/run.sh
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c 'no crash' <<<"$output")" -eq 6 ]
}
