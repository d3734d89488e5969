# Real Slurm accounting for the test Slurm of harness.bash: a MariaDB and a
# slurmdbd of the test's own, under $GOS_DIR (datadir, socket, logs) on
# ports beside GOS_SLURM_PORT; no system service is used or touched.
#   accounting_conf   the slurm.conf lines (slurm_up writes them)
#   accounting_up     started by slurm_up when GOS_ACCOUNTING is set; the
#                     cluster is slurm.conf's ClusterName
#   accounting_down   stops both; nothing of theirs is left running
# GOS_DBD_HOST: where Slurm's daemons and clients reach slurmdbd (localhost;
# the multi-node harness's head address, for its nodes). slurmdbd listens
# on every address of its network.
# Needs mariadb-server and slurmdbd.

gos_dbd_port() { echo $(( ${GOS_SLURM_PORT:-16817} + 2 )); }
gos_db_port() { echo $(( ${GOS_SLURM_PORT:-16817} + 3 )); }

accounting_conf() {
	cat <<CONF
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=${GOS_DBD_HOST:-localhost}
AccountingStoragePort=$(gos_dbd_port)
AccountingStoragePass=$GOS_MUNGE_SOCK
AccountingStorageEnforce=associations,qos
CONF
}

source "$(dirname "${BASH_SOURCE[0]}")/../wait.bash"

gos_sql() { mariadb --no-defaults -S "$GOS_DIR/run/mariadb.sock" -u root "$@"; }

accounting_up() {
	local db=$GOS_DIR/mariadb
	mkdir -p "$db"
	mariadb-install-db --no-defaults --datadir="$db" --user=root --auth-root-authentication-method=socket \
		--skip-test-db >"$GOS_DIR/log/mariadb-install.log" 2>&1 || {
		echo "mariadb-install-db failed:" >&2; tail -5 "$GOS_DIR/log/mariadb-install.log" >&2; return 1; }
	"${detached[@]}" mariadbd --no-defaults --datadir="$db" --user=root --bind-address=127.0.0.1 \
		--port="$(gos_db_port)" --socket="$GOS_DIR/run/mariadb.sock" --pid-file="$GOS_DIR/run/mariadb.pid" \
		--log-error="$GOS_DIR/log/mariadb.log" --skip-log-bin --innodb-buffer-pool-size=16M \
		</dev/null >/dev/null 2>&1 &
	wait_until 30 gos_sql -e 'select 1' >/dev/null 2>&1 || {
		echo "MariaDB did not start:" >&2; tail -5 "$GOS_DIR/log/mariadb.log" >&2; return 1; }
	# The database is made here, not by slurmdbd: finding it missing,
	# slurmdbd creates it over a second connection and reconnects on the
	# handle whose connect failed (1049 Unknown database), and with
	# MariaDB Connector/C 3.4 (Debian 13 and later) every query on that
	# handle that returns columns then fails ("5027 Number of columns in
	# result (=1) set execeeds maxmimum allowed number of columns (=0)"),
	# so slurmdbd stops at once in _check_mysql_concat_is_sane.
	gos_sql -e "CREATE DATABASE gos_acct;
		CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'gostest';
		GRANT ALL ON gos_acct.* TO 'slurm'@'127.0.0.1';" || return 1
	# slurmdbd reads slurmdbd.conf beside SLURM_CONF, and only if private.
	cat >"$GOS_DIR/etc/slurmdbd.conf" <<CONF
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$(gos_dbd_port)
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$GOS_MUNGE_SOCK
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$(gos_db_port)
StorageUser=slurm
StoragePass=gostest
StorageLoc=gos_acct
PidFile=$GOS_DIR/run/slurmdbd.pid
LogFile=$GOS_DIR/log/slurmdbd.log
CONF
	chmod 600 "$GOS_DIR/etc/slurmdbd.conf"
	"${detached[@]}" slurmdbd </dev/null >/dev/null 2>&1 || return 1
	wait_until 30 sacctmgr -n list cluster >/dev/null 2>&1 || {
		echo "slurmdbd did not start:" >&2; tail -5 "$GOS_DIR/log/slurmdbd.log" >&2; return 1; }
	sacctmgr -i add cluster "$(sed -n 's/^ClusterName=//p' "$SLURM_CONF")" >/dev/null
}

accounting_down() {
	local name pid
	for name in slurmdbd mariadb; do
		pid=$(cat "$GOS_DIR/run/$name.pid" 2>/dev/null) || continue
		kill "$pid" 2>/dev/null
		wait_until 5 eval "! kill -0 $pid 2>/dev/null" || kill -9 "$pid" 2>/dev/null
		rm -f "$GOS_DIR/run/$name.pid"
	done
	# Daemons whose pid file never got written go with the rest of the
	# harness's marked processes (slurm_down).
	return 0
}
