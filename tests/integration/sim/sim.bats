#!/usr/bin/env bats
# The gpuoversub-sim command line: exit codes, messages and outputs.

setup() {
	SIM="${BUILD:-build}/bin/gpuoversub-sim"
	TMP=$(mktemp -d)
}

teardown() {
	rm -rf "$TMP"
}

@test "help describes the command and exits 0" {
	run "$SIM" --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"usage: gpuoversub-sim"* ]]
}

@test "no trace is a usage error" {
	run "$SIM"
	[ "$status" -eq 2 ]
	[[ "$output" == *"no trace given"* ]]
}

@test "a bad option value names the option" {
	run "$SIM" --chunk-size 1000 examples/traces/rodinia-pair.csv
	[ "$status" -eq 2 ]
	[[ "$output" == *"--chunk-size must be 64K to 1G"* ]]
	run "$SIM" --link-gbps fast examples/traces/rodinia-pair.csv
	[ "$status" -eq 2 ]
	[[ "$output" == *"--link-gbps needs a positive number, not 'fast'"* ]]
	run "$SIM" --policies fcfs,best examples/traces/rodinia-pair.csv
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown policy 'best'"* ]]
}

@test "a bad trace line names file, line and reason" {
	printf '0,,capacity,1G\n1,a,alloc,1G,,buf\n2,a,alloc,2X,,c\n' >"$TMP/bad.csv"
	run "$SIM" "$TMP/bad.csv"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$TMP/bad.csv:3: size '2X'"* ]]
}

@test "a missing file and a missing capacity are explained" {
	run "$SIM" "$TMP/none.csv"
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot open trace file"* ]]
	printf '0,a,alloc,1G,,buf\n' >"$TMP/nocap.csv"
	run "$SIM" "$TMP/nocap.csv"
	[ "$status" -eq 1 ]
	[[ "$output" == *"no 'capacity' line"* ]]
	run "$SIM" --capacity 4G "$TMP/nocap.csv"
	[ "$status" -eq 0 ]
}

@test "the table compares all six policies" {
	run "$SIM" --quiet examples/traces/pagedos-150.csv
	[ "$status" -eq 0 ]
	for p in fcfs static uvm-lru gpuswap gprioswap gpuoversub; do
		[[ "$output" == *"$p"* ]]
	done
	[[ "$output" == *"Estimated slowdown per tenant"* ]]
}

@test "--csv prints one row per policy and tenant" {
	run "$SIM" --csv --policies gpuoversub,fcfs examples/traces/rodinia-pair.csv
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "policy,tenant,weight,jain,utilization,bytes_moved,alloc_p50_us,alloc_p99_us,slowdown,bytes_evicted,bytes_returned,bytes_host_placed,peak_resident,peak_host,oversub_s" ]
	[ "${#lines[@]}" -eq 5 ]
	[[ "${lines[1]}" == gpuoversub,inst-a,1,* ]]
}

@test "--svg writes a well-formed plot with a panel per policy" {
	run "$SIM" --quiet --svg "$TMP/plot.svg" examples/traces/mixed-8.csv
	[ "$status" -eq 0 ]
	python3 -c "import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); assert len(d.getElementsByTagName('polyline')) == 6 * 8" "$TMP/plot.svg"
	run "$SIM" --quiet --svg /nonexistent/dir/plot.svg examples/traces/rodinia-pair.csv
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot write the plot"* ]]
}

@test "the churn trace: the undamped policy moves far more, and the backoff's options are checked" {
	run "$SIM" --csv --policies gpuoversub,gpuoversub-undamped examples/traces/churn-200ms.csv
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	damped=$(echo "$output" | awk -F, '$1 == "gpuoversub" && $2 == "steady" { print $10 + $11 }')
	undamped=$(echo "$output" | awk -F, '$1 == "gpuoversub-undamped" && $2 == "steady" { print $10 + $11 }')
	echo "borrower moved: $damped damped, $undamped undamped"
	[ "$(awk -v d="$damped" -v u="$undamped" 'BEGIN { print (u > 0 && d * 10 <= u) }')" = 1 ]
	run "$SIM" --lend-backoff 2000 --lend-backoff-max 1 examples/traces/churn-200ms.csv
	[ "$status" -eq 2 ]
	[[ "$output" == *"--lend-backoff-max must not be shorter than --lend-backoff"* ]]
	run "$SIM" --lend-backoff soon examples/traces/churn-200ms.csv
	[ "$status" -eq 2 ]
	[[ "$output" == *"--lend-backoff needs a positive number, not 'soon'"* ]]
}
