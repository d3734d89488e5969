#!/usr/bin/env bats
# The Debian packages as a site runs them, in order: apt installs them and
# their maintainer scripts start the daemon from the installed unit; a
# private Slurm loads the installed plugin through
# `include /etc/slurm/plugstack.conf.d/*` and a job runs through it; an
# upgrade to the next version under two running jobs; purge. Nothing from the
# build tree but the test-only fake CUDA driver and the test program that
# stands for a user's CUDA application. Needs root; run by .ci/packages.sh
# with GOS_DEBS, the directory of the packages (version N), and
# GOS_DEBS_NEXT, that of the same tree one Debian revision up (N+1).
# No systemd runs here: tests/package/systemd/systemctl stands in for it,
# for what the maintainer scripts ask; the booted guest of tests/service
# installs, upgrades and purges the daemon's packages under a real one.

load ../integration/wait

PACKAGES=(gpuoversub libgpuoversub libgpuoversub-dev slurm-spank-gpuoversub gpuoversub-dkms)
MODULE=gpuoversub/$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' config/dkms.conf)
MiB=1048576

# Whether any of the packages is on the machine (installed or its conffiles left).
any_installed() {
	dpkg-query -W -f '${db:Status-Abbrev}\n' "${PACKAGES[@]}" 2>/dev/null | grep -q '^.[^n]'
}

setup_file() {
	[ -d "${GOS_DEBS:-}" ] && [ -d "${GOS_DEBS_NEXT:-}" ] || {
		echo "GOS_DEBS and GOS_DEBS_NEXT must name the directories of the packages and of the next version's" >&2
		return 1
	}
	! any_installed || { echo "gpuoversub's packages are on this machine already: purge them first" >&2; return 1; }
	export BUILD=${BUILD:-build} GOS_PACKAGED=1
	source tests/integration/slurm/harness.bash
	export GOS_SLURM_PORT=$(slurm_free_port)
	PKG_DIR=$(mktemp -d /tmp/gos-packages-XXXXXX)
	chmod 0755 "$PKG_DIR"	# the private Slurm's munged, as user munge, reaches its directory below
	export PKG_DIR GOS_SYSTEMD_STATE=$PKG_DIR/systemd
	# What every job inherits (sbatch exports the submitter's environment).
	export LD_LIBRARY_PATH=$(realpath "$BUILD/tests/fakecuda") FAKECUDA_MEMORY=256M \
		FAKECUDA_STATE=$PKG_DIR/fakecuda.state
	# The fake driver's one device, shared by the daemon (its own user, as
	# the unit runs it) and the jobs.
	install -m 0666 /dev/null "$FAKECUDA_STATE"
}

teardown_file() {
	source tests/package/systemd.bash
	source tests/integration/slurm/harness.bash
	slurm_env
	[ ! -f "$SLURM_CONF" ] || slurm_down || true
	# A test that failed midway leaves nothing installed or running either.
	! any_installed || systemd_apt purge -y -q "${PACKAGES[@]}" >/dev/null 2>&1 || true
	tests/package/systemd/systemctl stop gpuoversubd gpuoversub-record.socket 2>/dev/null || true
	rm -rf "$PKG_DIR"
}

# The private Slurm's settings, as slurm_up sets them, for the tests after it.
slurm_env() {
	export SLURM_CONF=$PKG_DIR/slurm/etc/slurm.conf GOS_DIR=$PKG_DIR/slurm GOS_SOCK=/run/gpuoversub/gpuoversubd.sock
}

setup() {
	source tests/package/systemd.bash
	source tests/integration/slurm/harness.bash
	slurm_env
}

systemctl() { tests/package/systemd/systemctl "$@"; }
ctl() { /usr/bin/gpuoversubctl "$@"; }
journal() { cat "$GOS_SYSTEMD_STATE/gpuoversubd.service.journal" 2>/dev/null; }
daemon_pid() { cat "$GOS_SYSTEMD_STATE/gpuoversubd.service.pid"; }
# The record helper's socket (gpuoversub-record.socket): its listener's
# pid, as the stand-in keeps it, and one request to it (gos_record_request
# --connect, copied where any user reaches it) as USER, in GROUP (USER's
# own without one), with a record as the daemon would send.
RECORD_SOCK=/run/gpuoversub-record.sock
socket_pid() { cat "$GOS_SYSTEMD_STATE/gpuoversub-record.socket.pid"; }
record() { head -n 1 tests/unit/report/golden/admin-comment-v3.txt | sed 's/^.*gpuoversub=/gpuoversub=/'; }
record_request() {	# USER[:GROUP] JOB START
	local user=${1%:*} group=${1#*:}
	[[ $1 == *:* ]] || group=$(id -gn "$user")
	shift
	install -m 0755 "$GOS_BUILD/tests/tools/gos_record_request" "$PKG_DIR/"
	record | setpriv --reuid="$user" --regid="$group" --clear-groups "$PKG_DIR/gos_record_request" --connect "$RECORD_SOCK" "$@"
}
# The packages of DIR, without their debug symbols.
debs() { ls "$1"/*.deb | grep -v -- '-dbgsym_'; }

answers() { ctl status >/dev/null 2>&1; }

# A job script: N buffers of 32 MiB, held until the test creates $PKG_DIR/go
# (two minutes at most), then checked.
job_script() {
	local f=$PKG_DIR/job-$1.sh n=$2
	cat >"$f" <<SCRIPT
#!/bin/bash
echo "PRELOAD=\$LD_PRELOAD"
{ for i in \$(seq $n); do echo "alloc b\$i 32"; done
  for _ in \$(seq 1200); do [ -e $PKG_DIR/go ] && break; sleep 0.1; done
  for i in \$(seq $n); do echo "verify b\$i"; done; echo quit; } | $GOS_BUILD/tests/tools/gos_testapp
SCRIPT
	echo "$f"
}
submit() { sbatch --parsable -o "$PKG_DIR/out-%j.txt" "$@"; }

# JSON from gpuoversubctl, asked in Python: json_ok COMMAND EXPRESSION over `d`.
json_ok() { ctl --json "$1" 2>/dev/null | python3 2>/dev/null -c "import json,sys; d=json.load(sys.stdin); sys.exit(0 if ($2) else 1)"; }
report() { echo "/var/log/gpuoversub/reports/job-$1.json"; }
wait_report() { wait_until 10 test -f "$(report "$1")"; }

@test "apt installs the packages; their scripts make the user and directories and start the unit's daemon as that user" {
	systemd_apt install -y -q $(debs "$GOS_DEBS") >"$PKG_DIR/install.log" 2>&1 || { cat "$PKG_DIR/install.log"; false; }
	for p in "${PACKAGES[@]}"; do dpkg-query -W -f '${db:Status-Abbrev}\n' "$p" | grep -qx 'ii '; done
	getent passwd gpuoversub
	[ "$(stat -c '%a %U %G' /var/lib/gpuoversub)" = "700 gpuoversub gpuoversub" ]
	[ "$(stat -c '%a %U %G' /var/log/gpuoversub)" = "750 gpuoversub gpuoversub" ]
	[ "$(stat -c '%a %U %G' /var/log/gpuoversub/reports)" = "2750 gpuoversub gpuoversub" ]
	[ -L /etc/systemd/system/multi-user.target.wants/gpuoversubd.service ]
	# The record helper's units: the socket enabled and listening, its
	# template started per connection, not enabled.
	[ -f /lib/systemd/system/gpuoversub-record@.service ]
	[ -L /etc/systemd/system/sockets.target.wants/gpuoversub-record.socket ]
	systemctl is-active gpuoversub-record.socket || { cat "$GOS_SYSTEMD_STATE/gpuoversub-record.socket.journal"; false; }
	[ "$(stat -c '%F %a %U %G' "$RECORD_SOCK")" = "socket 660 root gpuoversub" ]
	# The postinst started the unit: on a machine without a GPU, its
	# ExecStartPre (gpuoversubd --check) refused, saying why.
	journal | grep -q "no GPU to manage" || systemctl is-active gpuoversubd || { journal; false; }
	grep -q '^optional spank_gpuoversub.so ' /etc/slurm/plugstack.conf.d/gpuoversub.conf
	# The container runtimes' integration (gpuoversub(7), Containers), naming
	# the installed agent; gpuoversubctl finds it beside itself.
	[ -x /etc/enroot/hooks.d/90-gpuoversub.sh ]
	grep -q '^/usr/lib/libgpuoversub.so[[:space:]]' /etc/enroot/mounts.d/90-gpuoversub.fstab
	grep -qx 'bind path = /usr/lib/libgpuoversub.so' /usr/share/gpuoversub/containers/apptainer.conf
	[ -x /usr/share/gpuoversub/containers/ch-run-gpuoversub ]
	ctl cdi --output "$PKG_DIR/cdi.json"
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["devices"][1]["containerEdits"]["env"][0])' \
		"$PKG_DIR/cdi.json" | grep -qx 'LD_PRELOAD=/usr/lib/libgpuoversub.so:/usr/lib/libgpuoversub_mpi.so'
	# The headers compile as installed, and a program links and loads the MPI hooks.
	printf '#include <gpuoversub/%s>\n' gpuoversub.h gpuoversub_mpi.h engine/gos_engine.h >"$PKG_DIR/dev.c"
	echo 'int main(void) { return 0; }' >>"$PKG_DIR/dev.c"
	mpicc -Wall -Werror "$PKG_DIR/dev.c" -o "$PKG_DIR/dev" -lgpuoversub_mpi
	"$PKG_DIR/dev"
	[ -f /usr/lib/x86_64-linux-gnu/slurm-wlm/spank_gpuoversub.so ]
	# The admin gives the daemon a GPU (a simulated one here) and restarts it.
	sed -i 's/^reserve: .*/reserve: 0/' /etc/gpuoversub/gpuoversub.yaml
	printf 'simulated_gpus:\n  - {memory: 256M, numa_node: 0, pci_bus_id: "0000:17:00.0"}\n' >>/etc/gpuoversub/gpuoversub.yaml
	systemctl restart gpuoversubd
	wait_until 10 answers || { journal; false; }
	# It runs with the installed unit's own command line, as its own user,
	# with CAP_KILL (bit 5), CAP_NET_BIND_SERVICE (bit 10) and no other capability.
	[ "$(tr '\0' ' ' </proc/"$(daemon_pid)"/cmdline)" = "$(sed -n 's/^ExecStart=//p' /lib/systemd/system/gpuoversubd.service) " ]
	[ "$(stat -c %U /proc/"$(daemon_pid)")" = gpuoversub ]
	grep -E '^Cap(Eff|Bnd):' /proc/"$(daemon_pid)"/status
	[ "$(grep -cE '^Cap(Eff|Bnd):\s+0000000000000420$' /proc/"$(daemon_pid)"/status)" -eq 2 ]
}

@test "the record helper's socket serves the daemon's user with an answer line, and no one else" {
	# The installed template's command line, run as root per connection;
	# no slurmdbd here, so the request fails, with the helper's line.
	run record_request gpuoversub 7 1733140000
	echo "$output"; cat "$GOS_SYSTEMD_STATE/gpuoversub-record.socket.journal"
	[ "$status" -eq 0 ]
	[[ $output =~ ^(written|failed|not\ ended|refused)\  ]]
	# Another user's connection is refused by the socket's mode ...
	run record_request nobody 7 1733140000
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"cannot reach the record helper at $RECORD_SOCK: Permission denied" ]]
	# ... and, in the socket's group, by the helper (SO_PEERCRED's uid).
	run record_request nobody:gpuoversub 7 1733140000
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "refused uid $(id -u nobody) is not gpuoversub" ]
}

@test "DKMS builds and installs the module from gpuoversub-dkms" {
	kver=$(basename "$(kmod/scripts/headers.sh)" | sed 's/^linux-headers-//')
	dkms install "$MODULE" -k "$kver" >"$PKG_DIR/dkms.log" 2>&1 || { cat "$PKG_DIR/dkms.log"; false; }
	modinfo -F name "/lib/modules/$kver/updates/dkms/gpuoversub.ko" | grep -qx gpuoversub
}

@test "a job with --gpu-mem-oversub runs through the installed plugin, agent and daemon, and gets its report" {
	mkdir -p "$GOS_DIR"
	slurm_up "$GOS_DIR" 3>&-
	id=$(submit --gres=shard:1 --gpu-mem-oversub=2 "$(job_script one 2)")
	touch "$PKG_DIR/go"
	job_completed "$id" "$PKG_DIR/out-$id.txt"
	cat "$PKG_DIR/out-$id.txt"	# shown only when the test fails
	grep -qx "PRELOAD=/usr/lib/libgpuoversub.so" "$PKG_DIR/out-$id.txt"
	[ "$(grep -c '^ok' "$PKG_DIR/out-$id.txt")" -eq 5 ]
	wait_report "$id"
	[ "$(stat -c '%a %U %G' "$(report "$id")")" = "640 gpuoversub gpuoversub" ]
	grep -q "\[gpuoversub\] gpuoversub report for job $id" "$GOS_DIR/log/slurmd.log"
	rm "$PKG_DIR/go"
}

@test "an upgrade to the next version under two running jobs restarts the daemon and loses nothing" {
	next=$(dpkg-deb -f "$(ls "$GOS_DEBS_NEXT"/gpuoversub_*.deb)" Version)
	a=$(submit --gres=shard:1 --gpu-mem-oversub=2 "$(job_script a 5)")
	b=$(submit --gres=shard:1 --gpu-mem-oversub=2 "$(job_script b 5)")	# 320 MiB of 256
	wait_until 30 json_ok status "sum(t['demand'] for t in d['gpus'][0]['tenants']) == 320 * $MiB and \
		sum(t['host'] for t in d['gpus'][0]['tenants']) > 0"
	before=$(daemon_pid) socket_before=$(socket_pid)

	systemd_apt install -y -q $(debs "$GOS_DEBS_NEXT") >"$PKG_DIR/upgrade.log" 2>&1 || { cat "$PKG_DIR/upgrade.log"; false; }
	for p in "${PACKAGES[@]}"; do [ "$(dpkg-query -W -f '${Version}' "$p")" = "$next" ]; done
	# The maintainer scripts restarted the daemon (a new process) ...
	after=$(daemon_pid)
	[ "$after" != "$before" ]
	wait_until 10 answers || { journal; false; }
	# ... and the record helper's socket (a new listener, at the same path).
	systemctl is-active gpuoversub-record.socket && [ "$(socket_pid)" != "$socket_before" ] && [ -S "$RECORD_SOCK" ]
	# ... the agents came back to it, and each job counts once.
	wait_until 30 json_ok status "d['agents'] == 2 and len(d['gpus'][0]['tenants']) == 2"
	json_ok jobs "sorted(j['job'] for j in d) == sorted([$a, $b]) and all(j['tasks'] == 1 for j in d)"
	json_ok status "sum(t['demand'] for t in d['gpus'][0]['tenants']) == 320 * $MiB"
	json_ok status "d['gpus'][0]['used'] == sum(t['resident'] for t in d['gpus'][0]['tenants']) <= 256 * $MiB"

	touch "$PKG_DIR/go"
	for j in "$a" "$b"; do
		job_completed "$j" "$PKG_DIR/out-$j.txt"
		cat "$PKG_DIR/out-$j.txt"	# shown only when the test fails
		[ "$(grep -c '^ok' "$PKG_DIR/out-$j.txt")" -eq 11 ]	# ready, 5 allocations, 5 intact buffers
		! grep -q '^err\|^bad' "$PKG_DIR/out-$j.txt" || false
		wait_report "$j"
	done
	[ "$(daemon_pid)" = "$after" ]	# it did not die and get restarted on the way
	# Both reports count what happened before the upgrade, and count it once:
	# five allocations of 32 MiB each (the buffers the agents registered
	# again after the restart are not new ones), evictions from the squeeze.
	python3 - "$(report "$a")" "$(report "$b")" <<'PY'
import json, sys
reports = [json.load(open(f)) for f in sys.argv[1:]]
for r in reports:
    assert [(k["allocs"], k["bytes_allocated"]) for k in r["ranks"]] == [(5, 5 * 32 << 20)], (r["job"], r["ranks"])
    assert r["peak_device_bytes"] <= 256 << 20, (r["job"], r["peak_device_bytes"])
assert sum(r["bytes_evicted"] for r in reports) > 0
PY
}

@test "purge stops the daemon and the record helper's socket, and leaves nothing behind, its user included" {
	slurm_down || true	# (its last kill may find nothing left)
	pid=$(daemon_pid) listener=$(socket_pid)
	files=$(dpkg -L "${PACKAGES[@]}" | grep -vx '/\.' | sort -u)
	systemd_apt purge -y -q "${PACKAGES[@]}" >"$PKG_DIR/purge.log" 2>&1 || { cat "$PKG_DIR/purge.log"; false; }
	! kill -0 "$pid" 2>/dev/null || false
	! kill -0 "$listener" 2>/dev/null || false
	! any_installed || false
	# Each file the packages had, unless another package still owns it (a shared directory).
	left=$(while read -r f; do if [ -e "$f" ] && ! dpkg -S "$f" >/dev/null 2>&1; then echo "$f"; fi; done <<<"$files")
	[ -z "$left" ] || { echo "left behind: $left"; false; }
	for f in /etc/gpuoversub /var/lib/gpuoversub /var/log/gpuoversub /run/gpuoversub \
		/etc/slurm/plugstack.conf.d/gpuoversub.conf "/usr/src/${MODULE/\//-}" /var/lib/dkms/gpuoversub \
		/etc/systemd/system/multi-user.target.wants/gpuoversubd.service "$RECORD_SOCK" \
		/etc/systemd/system/sockets.target.wants/gpuoversub-record.socket; do
		[ ! -e "$f" ] && [ ! -L "$f" ] || { echo "left behind: $f"; false; }
	done
	[ -z "$(find /lib/modules -name 'gpuoversub.ko*')" ]
	! grep -rqs 'gpuoversubd\|gpuoversub-record' /var/lib/systemd/deb-systemd-helper-enabled || false
	! getent passwd gpuoversub || false
	! getent group gpuoversub || false
}
