#!/usr/bin/env bats
# The Prometheus textfile against the real promtool (Debian's prometheus
# package), and the example alert rules against promtool and the metrics
# the daemon writes (make check leaves it out, saying so, where promtool is
# missing). Root: the job is registered as the SPANK plugin would.

load ../wait
load daemon

RULES=examples/prometheus/gpuoversub.rules.yml

setup() {
	D=$(mktemp -d)
	PROM=$D/gpuoversub.prom
	daemon_up "exporter: {textfile: $PROM, period: 100ms}"
	# A job on the GPU, so that the job families have a sample.
	"${BUILD:-build}/tests/tools/gos_register" "$D/s.sock" step 7 0
	wait_until 10 grep -q '^gpuoversub_job_entitlement_bytes{job="7",gpu="0"}' "$PROM"
}

teardown() {
	daemon_down
}

@test "the exporter's textfile with a job on a GPU passes promtool check metrics" {
	cat "$PROM"	# shown only when the test fails
	run promtool check metrics <"$PROM"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	# The job-wide channel's counters are there from the start, at 0.
	grep -qx 'gpuoversub_jobwide_run_ends_total 0' "$PROM"
	grep -qx 'gpuoversub_jobwide_records_written_total 0' "$PROM"
	grep -qx '# TYPE gpuoversub_jobwide_refused_total counter' "$PROM"
}

@test "the example alert rules are valid, fire as their unit test says, and use only metrics the daemon exports" {
	run promtool check rules "$RULES"
	[ "$status" -eq 0 ]
	run promtool test rules examples/prometheus/gpuoversub.rules.test.yml
	[ "$status" -eq 0 ]
	for metric in $(grep -o 'gpuoversub_[a-z_]*' "$RULES" | sort -u); do
		grep -q "^# TYPE $metric " "$PROM" || { echo "the daemon exports no $metric"; false; }
	done
}
