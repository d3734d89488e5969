#!/usr/bin/env bash
# Runs every fuzz target for FUZZ_RUNS inputs (0: until interrupted) from
# its seed corpus. `make fuzz FUZZ_RUNS=0` is the long run; see README.
set -euo pipefail
dir=${FUZZ_DIR:-${BUILD:-build}/fuzz}	# fuzz.mk's FUZZ_DIR
runs=${FUZZ_RUNS:-20000}
shopt -s nullglob
bins=("$dir"/fuzz_*)
[ ${#bins[@]} -gt 0 ] || { echo "no fuzz targets in $dir; build them with make"; exit 1; }
declare -A seeds=([fuzz_trace]="examples/traces tests/fuzz/corpus-trace" [fuzz_config]=tests/fuzz/corpus-config
	[fuzz_handlers]=tests/fuzz/corpus-handlers [fuzz_jobwide_frame]=tests/fuzz/corpus-jobwide-frame)
for bin in "${bins[@]}"; do
	name=$(basename "$bin")
	[[ -x $bin && $name != *.log ]] || continue
	corpus=$dir/corpus-$name
	mkdir -p "$corpus"
	"$bin" -runs="$runs" -max_len=4096 -seed=1 -print_final_stats=1 "$corpus" ${seeds[$name]:-} 2>"$dir/$name.log" ||
		{ echo "$name: crash; see $dir/$name.log and the crash-* file"; tail -30 "$dir/$name.log"; exit 1; }
	echo "$name: $(grep -o 'stat::number_of_executed_units: [0-9]*' "$dir/$name.log" | awk '{print $2}') inputs, no crash"
done
