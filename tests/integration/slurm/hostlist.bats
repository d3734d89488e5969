#!/usr/bin/env bats
# common/util/hostlist.cpp reads what Slurm writes and writes what Slurm
# reads (issue 30, step 1): each side expands the other's expressions to
# the same names, and what Slurm refuses is refused. scontrol's hostlist
# commands need a slurm.conf, no slurmctld.

setup() {
	command -v scontrol >/dev/null || skip "no scontrol (apt-get install slurm-client)"
	dir=$(mktemp -d /tmp/gos-hostlist-XXXXXX)
	cat >"$dir/slurm.conf" <<CONF
ClusterName=hostlist
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=1
NodeName=node1 NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN
PartitionName=debug Nodes=node1 Default=YES
CONF
	export SLURM_CONF=$dir/slurm.conf
	tool=${BUILD:-build}/tests/tools/gos_hostlist
	# Padded and unpadded numbers, widths that change, digits inside the
	# prefix, names without a number, and a thousand nodes with gaps.
	names=(n0001 n0002 n0003 n0004 n0007 gpu12 n8 n9 n10 n010 n098 n099 n100 a1b2 a1b3 x login-1a 7 8)
	for i in $(seq 1 1000); do
		((i % 7 == 3)) || names+=("$(printf 'rack%02dn%04d' $((i % 4)) "$i")")
	done
}

teardown() {
	[ -z "${dir:-}" ] || rm -rf "$dir"
}

sorted() { printf '%s\n' "$@" | sort; }

@test "what Slurm compresses expands to the same names here" {
	expression=$(scontrol show hostlist "$(IFS=,; echo "${names[*]}")")
	run "$tool" expand "$expression"
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "$output" | sort)" = "$(sorted "${names[@]}")" ]
}

@test "what is compressed here Slurm expands to the same names" {
	run "$tool" compress "${names[@]}"
	[ "$status" -eq 0 ]
	[ "$(scontrol show hostnames "$output" | sort)" = "$(sorted "${names[@]}")" ]
}

@test "what Slurm refuses is refused here, with the reason" {
	for bad in 'n[3-1]' 'n[]' 'n[a-b]' 'n[0-70000]'; do
		run scontrol show hostnames "$bad"	# exits 0 all the same
		[[ $output == *"Invalid hostlist"* ]]
		run "$tool" expand "$bad"
		[ "$status" -eq 1 ]
		[[ $output == "gos_hostlist: '"* ]]
	done
	# Nested brackets: Slurm 22.05 refuses them, 24.11 and 26.05 print
	# n[[1]] as n[1]. A name never holds a bracket, so they are refused here.
	run "$tool" expand 'n[[1]]'
	[ "$status" -eq 1 ]
	[[ $output == "gos_hostlist: '"* ]]
}
