#!/usr/bin/env bats
# gpuoversub.ko booted in a QEMU guest by run.sh (beside this file): one
# boot, whose console log the tests below read. Without QEMU, busybox-static
# or kernel headers (missing.sh) they skip; `make check` refuses to run
# without them unless GOS_ALLOW_SKIP=kmod.

setup_file() {
	export LOG=${BUILD:-build}/kmod-vm/console.log
	MISSING=$(tests/integration/kmod/missing.sh)
	export MISSING
	[ -n "$MISSING" ] && return 0
	rm -f "$LOG"
	tests/integration/kmod/run.sh >"${BUILD:-build}/kmod-vm.out" 2>&1 || true
	# Which kernel, and KVM or TCG (and why), in the TAP output.
	sed -n 's/^== booting /# booting /p' "${BUILD:-build}/kmod-vm.out" >&3
}

setup() {
	[ -z "$MISSING" ] || skip "needs $MISSING"
	[ -f "$LOG" ] || { cat "${BUILD:-build}/kmod-vm.out"; return 1; }
}

result() {	# the kselftest line for test $1
	tr -d '\r' <"$LOG" | grep -E "^(not )?ok [0-9]+ global\.$1\$"
}

@test "the guest booted the module and finished without a hang or a panic" {
	tr -d '\r' <"$LOG" | grep -q '^GOS: booted'
	tr -d '\r' <"$LOG" | grep -q '^GOS: done'
}
@test "ABI version" { [[ "$(result abi_version)" == ok* ]]; }
@test "forked clients overcommit: orders reach the victim, returns after free" {
	[[ "$(result overcommit_sends_orders_to_the_victim_and_returns_after_free)" == ok* ]]
}
@test "kill -9 of a client holding chunks releases them" {
	[[ "$(result kill_9_of_a_client_holding_host_chunks_frees_them)" == ok* ]]
}
@test "a blocking read wakes when an order arrives" {
	[[ "$(result a_blocking_read_wakes_for_a_new_order)" == ok* ]]
}
@test "the daemon's calls: refused on an agent's file, granted by the control node's permissions, not a capability" {
	[[ "$(result the_daemons_calls_are_the_control_nodes_alone)" == ok* ]]
}
@test "bad arguments for every ioctl get EINVAL, EFAULT or ENOTTY" {
	[[ "$(result bad_arguments_for_every_ioctl)" == ok* ]]
}
@test "tenant policy, limits, minimums, stats, placement, destroy; GPU external memory" {
	[[ "$(result tenant_policy_stats_placement_and_gpu_accounting)" == ok* ]]
}
@test "a job bound to tenants on two GPUs allocates on the right one and hears of its own GPU index" {
	[[ "$(result a_job_on_two_gpus_allocates_on_the_tenant_of_each)" == ok* ]]
}
@test "the tenant list names every tenant and no destroyed one" {
	[[ "$(result the_tenant_list_names_every_tenant)" == ok* ]]
}
@test "a tenant bound to a cgroup takes its processes, and no other" {
	[[ "$(result a_cgroup_binds_its_processes_and_no_other)" == ok* ]]
}
@test "a task binding holds the process, not its pid: a recycled pid is not bound" {
	[[ "$(result a_recycled_pid_is_another_process)" == ok* ]]
}
@test "a tenant's buffer cap (max_buffers_per_job) refuses one buffer more with ENOBUFS; pads and flags refused" {
	[[ "$(result a_tenants_buffer_cap_refuses_one_more_with_enobufs)" == ok* ]]
}
@test "100000 random ioctls" { [[ "$(result random_ioctls_never_hurt_the_kernel)" == ok* ]]; }
daemon_check() {	# the guest's daemon test said ok for $1
	tr -d '\r' <"$LOG" | grep -q '^GOS: daemon restart test finished'
	! tr -d '\r' <"$LOG" | grep -E '^GOS: FAIL daemon'
	tr -d '\r' <"$LOG" | grep -q "^GOS: ok daemon: $1"
}
@test "kernel mode: gpuoversubd drives the module, the agent allocates on it and obeys its orders" {
	daemon_check "orders from the module reached the victim"
	daemon_check "evicted data went to the GPU's NUMA node"
	daemon_check "the daemon names the policy settings the module decides"
	daemon_check "a forked child leaves the parent's buffers in the module"
}
@test "kernel mode: kill -9 and restart of gpuoversubd under two jobs keeps their tenants" {
	daemon_check "the restarted daemon kept both jobs' tenants"
	daemon_check "the job's view after the restart"
}
@test "kernel mode: returns after the restart, data intact, evictions reported once" {
	daemon_check "returns after the restart"
	daemon_check "data intact"
	daemon_check "job 42's report counts its [0-9]* evicted bytes once"
}
@test "rmmod is refused while a file of either node is open; 20 load/unload cycles leak no slab" {
	! tr -d '\r' <"$LOG" | grep -E '^GOS: FAIL'
	tr -d '\r' <"$LOG" | grep -q '^GOS: unreclaimable slab'
}
@test "the kernel logged no BUG, WARNING or oops" {
	! tr -d '\r' <"$LOG" | grep -E 'BUG:|WARNING:|Oops|general protection|Call Trace'
}
