#!/usr/bin/env bats
# gpuoversub-slurm-facts says why a fact is missing in words a site admin
# reads: a slurmdbd that cannot be reached is named with its error (the
# site without accounting is in slurm.bats, which has a slurmctld).

setup() {
	dir=$(mktemp -d /tmp/gos-facts-XXXXXX)
	# Nothing listens on ports 1 and 2: slurmctld and slurmdbd both down.
	cat >"$dir/slurm.conf" <<CONF
ClusterName=facts
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=1
MessageTimeout=2
AuthType=auth/munge
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=2
NodeName=node1 NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN
PartitionName=debug Nodes=node1 Default=YES
CONF
}

teardown() {
	rm -rf "$dir"
}

@test "a slurmdbd that cannot be reached is named with its error" {
	run env SLURM_CONF="$dir/slurm.conf" "${BUILD:-build}/libexec/gpuoversub/gpuoversub-slurm-facts"
	[ "$status" -eq 0 ]
	[[ $output == *"unavailable qos slurmdbd cannot be reached: Connection refused"* ]]
	[[ $output == *"unavailable partitions slurmctld: "* ]]
	[[ $output != *"No error"* ]]
}

@test "--node-addrs names slurmctld's error when it cannot be reached" {
	run env SLURM_CONF="$dir/slurm.conf" "${BUILD:-build}/libexec/gpuoversub/gpuoversub-slurm-facts" --node-addrs
	[ "$status" -eq 0 ]
	[[ $output == "unavailable nodes slurmctld: "* ]]
}
