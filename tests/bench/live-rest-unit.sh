#!/bin/sh
# shellcheck disable=SC2015 # ok and bad always succeed
# tests/bench/live-rest-unit.sh: the packaged slurmrestd unit (slurm-exporter-shim-slurmrestd.service)
# run against a real Slurm, and what it costs slurmctld and slurmrestd per scrape.
#
# PID 1 need not be systemd: the unit's ExecStart is run by hand as the unit would run it, read
# from the installed unit file: as its User= and Group= (setpriv: those ids, the user's groups, no
# capabilities, no_new_privs), its UMask=, its RuntimeDirectory= made with RuntimeDirectoryMode=,
# systemd's environment (PATH, USER, LOGNAME, HOME, SHELL, RUNTIME_DIRECTORY) plus its
# EnvironmentFile=, and $SLURMRESTD_ARGS split into words as systemd splits it. The
# EnvironmentFile is a copy of the installed one with the two lines an admin of this Slurm adds:
# SLURMRESTD=$SLURM_PREFIX/sbin/slurmrestd and SLURM_CONF=<this cluster's slurm.conf>. The
# sandbox settings (ProtectSystem=, SystemCallFilter=, MemoryDenyWriteExecute=...) need systemd;
# instead, slurmrestd runs once under strace while it answers every document the shim reads, and
# the script checks what it did against them: every system call it made is allowed by the unit's
# SystemCallFilter= (systemd-analyze syscall-filter), no mapping was writable and executable, no
# socket outside RestrictAddressFamilies=, no namespace unshared, no file written outside the
# RuntimeDirectory.
#
# Then, on a private cluster on 127.0.0.1 (its own munged, one slurmctld with
# priority/multifactor, four slurmd in multiple-slurmd mode; jobs of several users, one node
# drained, one down, one allocated), the shim runs as the same user with
# --slurmrestd.url unix:<the unit's socket> --slurmrestd.jobs, and the script checks: each node's
# status label and each state count as sinfo prints them, the queue counts as squeue counts them,
# slurm_account_fairshare, and which families were served from slurmrestd
# (slurm_exporter_shim_row_fidelity{upstream="slurmrestd"}). Finally, at each RECORDS level, the
# CPU per scrape of slurmctld and slurmrestd (tests/bench/live_cpu.py: process CPU clocks; slurmctld's
# idle rate subtracted): the shim with every interval 0 without slurmrestd, with it, with it and
# --slurmrestd.jobs, and each slurmrestd document alone.
#
# With DBD_PREFIX, the cluster has slurmdbd accounting, so that FairShare is shown live: a private
# MariaDB (its own datadir, socket and port, run as the mysql user) and DBD_PREFIX's slurmdbd (built
# with accounting_storage/mysql; it may be up to two releases newer than SLURM_PREFIX's slurmctld,
# which Slurm supports), ten accounts acct0..acct9 under root with RawShares 1..10 and the FILL_USERS
# in each, AccountingStorageType=accounting_storage/slurmdbd, and three short jobs of different users,
# accounts and sizes run first, so that usage and so FairShare differ. Then slurm_account_fairshare is
# checked against the old exporter's own reading of `sshare -n -P -o account,fairshare` (run as root,
# as its unit ran it: lines starting with two spaces skipped, the account trimmed, an empty FairShare
# read as 0, the last line of an account winning) and every user row of `sshare -a` against the
# /shares document the unit's slurmrestd serves; slurmdbd's CPU per scrape is measured too.
#
# Usage, as root (slurmrestd refuses root, so it runs as the unit's user), with the package
# installed (dpkg -i / rpm -i: the unit, run-slurmrestd, the defaults file, the user):
#   SLURM_PREFIX=/opt/slurm-25.11 tests/bench/live-rest-unit.sh 2>&1 | tee live-rest.txt
# Environment:
#   SLURM_PREFIX   required: an installed Slurm (sbin/slurmctld, sbin/slurmd built with
#                  --enable-multiple-slurmd, sbin/slurmrestd, bin/sbatch, squeue, sinfo, sshare,
#                  scontrol). This script never builds one.
#   SLURM_SRC      optional: the Slurm source tree it was built from, to print its git commit
#   PKG_ROOT       where the package's files are (default: / , the installed package; or a
#                  "make install DESTDIR=..." tree, UNITDIR /lib or /usr/lib)
#   SHIM_BIN       the shim (default $PKG_ROOT/usr/bin/slurm-exporter-shim); MAPPING its table
#                  (default $PKG_ROOT/etc/slurm-exporter-shim/prometheus-slurm-exporter.json)
#   MUNGED         munged (default: munged on PATH, else /usr/sbin/munged)
#   BASE_PORT      slurmctld's port; slurmd use the next four, the shim BASE_PORT+10 (default 26817)
#   RECORDS        job record levels, ascending (default "50 2000")
#   SCRAPES        runs per row (default 20), SCRAPE_EVERY s apart (default 0.5)
#   FILL_USERS     the accounts that own the held jobs (default: the first ten with a uid from 1 to
#                  65533 in /etc/passwd, the unit's user left out)
#   DBD_PREFIX     optional: an installed Slurm whose sbin/slurmdbd has accounting_storage/mysql (its
#                  lib/slurm); slurmdbd on BASE_PORT+5, MariaDB on BASE_PORT+6 (127.0.0.1 only)
#   MYSQLD         with DBD_PREFIX: the MariaDB server (default mariadbd, else mysqld, on PATH or in
#                  /usr/sbin); mariadb-install-db and the mariadb client are looked for beside it
#   WORKDIR, KEEP  the work directory (default a new one under /tmp, removed unless KEEP=1)
# Every process it started is stopped at exit, by its PID; the RuntimeDirectory it made is removed.
set -eu

SLURM_PREFIX=${SLURM_PREFIX:-}
PKG_ROOT=${PKG_ROOT:-}
PKG_ROOT=${PKG_ROOT%/}
SHIM_BIN=${SHIM_BIN:-$PKG_ROOT/usr/bin/slurm-exporter-shim}
MAPPING=${MAPPING:-$PKG_ROOT/etc/slurm-exporter-shim/prometheus-slurm-exporter.json}
BASE_PORT=${BASE_PORT:-26817}
DBD_PREFIX=${DBD_PREFIX:-}
DBD_PORT=$((BASE_PORT + 5))
DB_PORT=$((BASE_PORT + 6))
RECORDS=${RECORDS:-50 2000}
SCRAPES=${SCRAPES:-20}
SCRAPE_EVERY=${SCRAPE_EVERY:-0.5}
KEEP=${KEEP:-0}
LIVE_NAME=live-rest-unit

die() {
	echo "$LIVE_NAME: $*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || die "run as root: slurmrestd runs as the unit's user, and the cluster's SlurmUser is root"
[ -n "$SLURM_PREFIX" ] || die "set SLURM_PREFIX to an installed Slurm (this script does not build one)"
for b in sbin/slurmctld sbin/slurmd sbin/slurmrestd bin/sbatch bin/squeue bin/sinfo bin/sshare bin/scontrol; do
	[ -x "$SLURM_PREFIX/$b" ] || die "$SLURM_PREFIX/$b not found"
done
UNIT=""
for d in /lib/systemd/system /usr/lib/systemd/system; do
	[ -f "$PKG_ROOT$d/slurm-exporter-shim-slurmrestd.service" ] && UNIT=$PKG_ROOT$d/slurm-exporter-shim-slurmrestd.service && break
done
[ -n "$UNIT" ] || die "no slurm-exporter-shim-slurmrestd.service under $PKG_ROOT/lib or /usr/lib: install the package (or set PKG_ROOT)"
MUNGED=${MUNGED:-$(command -v munged || echo /usr/sbin/munged)}
[ -x "$MUNGED" ] || die "munged not found (set MUNGED)"
[ -x "$SHIM_BIN" ] || die "$SHIM_BIN not found"
[ -r "$MAPPING" ] || die "$MAPPING not found"
for t in curl python3 setpriv strace systemd-analyze; do
	command -v "$t" >/dev/null || die "$t not found"
done
if [ -n "$DBD_PREFIX" ]; then
	[ -x "$DBD_PREFIX/sbin/slurmdbd" ] || die "$DBD_PREFIX/sbin/slurmdbd not found"
	[ -e "$DBD_PREFIX/lib/slurm/accounting_storage_mysql.so" ] ||
		die "$DBD_PREFIX/lib/slurm/accounting_storage_mysql.so not found: that slurmdbd cannot store accounting"
	[ -x "$SLURM_PREFIX/bin/sacctmgr" ] || die "$SLURM_PREFIX/bin/sacctmgr not found"
	PATH_DB=$PATH:/usr/sbin:/sbin
	MYSQLD=${MYSQLD:-$(PATH=$PATH_DB command -v mariadbd || PATH=$PATH_DB command -v mysqld || true)}
	[ -x "$MYSQLD" ] || die "no MariaDB server (mariadbd, mysqld) found: set MYSQLD"
	DB_INSTALL=$(PATH=$PATH_DB command -v mariadb-install-db || PATH=$PATH_DB command -v mysql_install_db || true)
	DB_CLIENT=$(PATH=$PATH_DB command -v mariadb || PATH=$PATH_DB command -v mysql || true)
	[ -n "$DB_INSTALL" ] && [ -n "$DB_CLIENT" ] || die "mariadb-install-db or the mariadb client not found"
	getent passwd mysql >/dev/null || die "no mysql user (MariaDB's package creates it)"
fi
LIVE_CPU="python3 $(cd "$(dirname "$0")" && pwd)/live_cpu.py"

# --- the unit, as systemd reads it ------------------------------------------------------------
# ukey KEY: the unit's KEY= value (the last one)
ukey() { sed -n "s/^$1=//p" "$UNIT" | tail -n 1; }
U_USER=$(ukey User)
U_GROUP=$(ukey Group)
U_UMASK=$(ukey UMask)
U_ENVFILE=$(ukey EnvironmentFile)
U_ENVFILE=${U_ENVFILE#-}
U_RUNDIR=/run/$(ukey RuntimeDirectory)
U_RUNMODE=$(ukey RuntimeDirectoryMode)
U_EXEC=$(ukey ExecStart)
getent passwd "$U_USER" >/dev/null || die "no user $U_USER (the package creates it)"
[ -f "$PKG_ROOT$U_ENVFILE" ] || die "no $PKG_ROOT$U_ENVFILE"
U_HOME=$(getent passwd "$U_USER" | cut -d: -f6)
U_SHELL=$(getent passwd "$U_USER" | cut -d: -f7)
SOCK=$(printf '%s\n' "$U_EXEC" | tr ' ' '\n' | sed -n 's/^unix://p')
[ -n "$SOCK" ] || die "no unix: socket in ExecStart=$U_EXEC"
[ ! -e "$U_RUNDIR" ] || die "$U_RUNDIR exists (the unit or another run of this script is running)"

ME=$(id -un)
W=${WORKDIR:-$(mktemp -d "/tmp/$LIVE_NAME.XXXXXX")}
mkdir -p "$W/munge" "$W/state" "$W/spool" "$W/log" "$W/run"
chmod 700 "$W/munge"
CONF=$W/slurm.conf
CTLD=http://127.0.0.1:$BASE_PORT
SHIM_PORT=$((BASE_PORT + 10))
PIDS=""
DBD_PID=""
REST_PID=""
SHIM_PID=""

cleanup() {
	# the running job first: slurmstepd ends its processes (killed daemons would leave them)
	[ -z "${CTLD_PID:-}" ] || SLURM_CONF=$CONF timeout 10 "$SLURM_PREFIX/bin/scancel" --state=RUNNING 2>/dev/null || true
	[ -z "${CTLD_PID:-}" ] || sleep 2
	for p in $PIDS; do
		kill "$p" 2>/dev/null || true
	done
	sleep 1
	for p in $PIDS; do
		kill -9 "$p" 2>/dev/null || true
	done
	rm -rf "$U_RUNDIR"
	if [ "$KEEP" = 1 ]; then
		echo "$LIVE_NAME: kept $W" >&2
	elif [ -z "${WORKDIR:-}" ]; then
		rm -rf "$W"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- the cluster (as tests/bench/live-slurm.sh's) -----------------------------------------------------
start_munge() {
	dd if=/dev/urandom of="$W/munge/munge.key" bs=1024 count=1 2>/dev/null
	chmod 600 "$W/munge/munge.key"
	"$MUNGED" --force --socket="$W/munge/munge.socket.2" --key-file="$W/munge/munge.key" \
		--pid-file="$W/munge/munged.pid" --seed-file="$W/munge/munged.seed" --log-file="$W/munge/munged.log" ||
		die "munged does not start (see $W/munge/munged.log)"
	PIDS="$PIDS $(cat "$W/munge/munged.pid")"
}

write_conf() {
	cat >"$CONF" <<EOF
# tests/bench/$LIVE_NAME.sh: a private cluster on 127.0.0.1 only
ClusterName=liverest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$BASE_PORT
SlurmUser=$ME
SlurmdUser=$ME
AuthType=auth/munge
AuthInfo=socket=$W/munge/munge.socket.2
CredType=cred/munge
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
MetricsType=metrics/openmetrics
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool/slurmd.%n
SlurmctldPidFile=$W/run/slurmctld.pid
SlurmdPidFile=$W/run/slurmd.%n.pid
SlurmctldLogFile=$W/log/slurmctld.log
SlurmdLogFile=$W/log/slurmd.%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
$(if [ -n "$DBD_PREFIX" ]; then
		# AccountingStoragePass: with auth/munge, the munge socket of slurmdbd's connections.
		# AccountingStorageEnforce=limits: without it slurmctld adds a job's last usage at its end
		# only at the next priority calculation if the job still runs then (acct_policy.c calls
		# priority_g_job_end only when limits are enforced), so a short job would count nothing
		printf '%s\n' AccountingStorageType=accounting_storage/slurmdbd AccountingStorageHost=127.0.0.1 \
			"AccountingStoragePort=$DBD_PORT" "AccountingStoragePass=$W/munge/munge.socket.2" \
			AccountingStorageEnforce=associations,limits
	else
		echo AccountingStorageType=accounting_storage/none
	fi)
JobCompType=jobcomp/none
PriorityType=priority/multifactor
PriorityWeightFairshare=10000
PriorityWeightAge=1000
PriorityCalcPeriod=1
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SlurmdParameters=config_overrides
ReturnToService=2
MaxJobCount=200000
MinJobAge=7200
MailProg=/bin/true
NodeName=n1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((BASE_PORT + 1)) CPUs=4 RealMemory=8000
NodeName=n2 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((BASE_PORT + 2)) CPUs=8 RealMemory=16000
NodeName=n3 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((BASE_PORT + 3)) CPUs=16 RealMemory=32000
NodeName=n4 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((BASE_PORT + 4)) CPUs=16 RealMemory=64000
PartitionName=batch Nodes=n[1-4] Default=YES MaxTime=INFINITE State=UP
PartitionName=debug Nodes=n1 MaxTime=60 State=UP
EOF
	# the unit's user reads the config and reaches the munge socket, as on a site
	chmod 755 "$W" "$W/munge"
	chmod 644 "$CONF"
}

slurm() {
	cmd=$1
	shift
	SLURM_CONF=$CONF "$SLURM_PREFIX/bin/$cmd" "$@"
}

# wait_for TRIES PID MESSAGE CMD...: CMD once a second until it succeeds; die with MESSAGE after
# TRIES tries, or as soon as process PID has exited (PID "-": no process to watch)
wait_for() {
	wf_tries=$1 wf_pid=$2 wf_msg=$3
	shift 3
	wf_i=0
	until "$@"; do
		wf_i=$((wf_i + 1))
		[ $wf_i -lt "$wf_tries" ] || die "$wf_msg"
		[ "$wf_pid" = - ] || kill -0 "$wf_pid" 2>/dev/null || die "$wf_msg (it exited)"
		sleep 1
	done
}
# lines_at_least N CMD..., lines_at_most N CMD...: whether CMD prints at least (most) N lines
lines_at_least() {
	la_n=$1
	shift
	[ "$("$@" | wc -l)" -ge "$la_n" ]
}
lines_at_most() {
	la_n=$1
	shift
	[ "$("$@" | wc -l)" -le "$la_n" ]
}
quiet() { "$@" >/dev/null 2>&1; }
idle_nodes_are() { [ "$(slurm sinfo -h -o %D -t idle | awk '{ s += $1 } END { print s + 0 }')" -ge "$1" ]; }

start_slurm() {
	"$SLURM_PREFIX/sbin/slurmctld" -D -i -f "$CONF" >"$W/log/slurmctld.out" 2>&1 &
	CTLD_PID=$!
	PIDS="$PIDS $CTLD_PID"
	for n in n1 n2 n3 n4; do
		"$SLURM_PREFIX/sbin/slurmd" -D -N "$n" -f "$CONF" >"$W/log/slurmd.$n.out" 2>&1 &
		PIDS="$PIDS $!"
	done
	wait_for 60 "$CTLD_PID" "slurmctld's metrics do not answer on $CTLD (see $W/log/slurmctld.log)" \
		curl -sf -o /dev/null "$CTLD/metrics/scheduler"
	wait_for 30 - "not every node is idle after 30 s (see $W/log/slurmd.*)" idle_nodes_are 4
}

# --- accounting: MariaDB and slurmdbd (DBD_PREFIX) -----------------------------------------------
# start_db: a private MariaDB on 127.0.0.1:DB_PORT (its datadir and socket in $W/mysql) with a user
# for slurmdbd whose password is made here; then slurmdbd, and the cluster, the accounts and the
# associations made with sacctmgr. Before slurmctld starts, so that it finds its cluster.
start_db() {
	mkdir -p "$W/mysql"
	chown mysql:mysql "$W/mysql"
	"$DB_INSTALL" --no-defaults --user=mysql --datadir="$W/mysql" --skip-test-db >"$W/log/mysql-install.out" 2>&1 ||
		die "$DB_INSTALL failed (see $W/log/mysql-install.out)"
	"$MYSQLD" --no-defaults --user=mysql --datadir="$W/mysql" --socket="$W/mysql/mysqld.sock" \
		--pid-file="$W/mysql/mysqld.pid" --port="$DB_PORT" --bind-address=127.0.0.1 \
		--log-error="$W/log/mysqld.log" --innodb-buffer-pool-size=64M --skip-log-bin >"$W/log/mysqld.out" 2>&1 &
	DB_PID=$!
	PIDS="$PIDS $DB_PID"
	wait_for 60 "$DB_PID" "MariaDB does not start (see $W/log/mysqld.log)" \
		quiet "$DB_CLIENT" --no-defaults -S "$W/mysql/mysqld.sock" -u root -e 'SELECT 1'
	pass=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
	"$DB_CLIENT" --no-defaults -S "$W/mysql/mysqld.sock" -u root -e "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY '$pass';
		GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';" || die "MariaDB: the slurm user not made"
	# slurmdbd reads slurmdbd.conf beside SLURM_CONF; it must be SlurmUser's, mode 0600
	(
		umask 077
		cat >"$W/slurmdbd.conf" <<EOF
# tests/bench/$LIVE_NAME.sh: slurmdbd on 127.0.0.1 only
AuthType=auth/munge
AuthInfo=socket=$W/munge/munge.socket.2
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=$ME
LogFile=$W/log/slurmdbd.log
PidFile=$W/run/slurmdbd.pid
DebugLevel=info
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=$pass
StorageLoc=slurm_acct_db
EOF
	)
	SLURM_CONF=$CONF "$DBD_PREFIX/sbin/slurmdbd" -D >"$W/log/slurmdbd.out" 2>&1 &
	DBD_PID=$!
	PIDS="$PIDS $DBD_PID"
	wait_for 60 "$DBD_PID" "slurmdbd does not answer (see $W/log/slurmdbd.log)" quiet slurm sacctmgr -n list cluster
	slurm sacctmgr -i add cluster liverest >/dev/null || die "sacctmgr add cluster failed"
	accts=""
	for k in 0 1 2 3 4 5 6 7 8 9; do
		slurm sacctmgr -i add account "acct$k" cluster=liverest fairshare=$((k + 1)) >/dev/null ||
			die "sacctmgr add account acct$k failed"
		accts="$accts${accts:+,}acct$k"
	done
	users=$(fill_users | tr ' ' '\n' | cut -d: -f1 | sed '/^$/d' | paste -sd, -)
	slurm sacctmgr -i add user "$users" account="$accts" cluster=liverest >/dev/null || die "sacctmgr add user failed"
}

# warm_up: three short jobs of different users, accounts and sizes, then until their usage is in
# sshare and a priority calculation (PriorityCalcPeriod, 1 min) has turned it into FairShare
warm_up() {
	# shellcheck disable=SC2046 # the users' words
	set -- $(fill_users)
	k=0
	for spec in "$1 acct0 4" "$2 acct2 16" "$3 acct5 8"; do
		# shellcheck disable=SC2086 # its words
		set -- $spec
		setpriv --reuid="$(echo "$1" | cut -d: -f2)" --regid="$(echo "$1" | cut -d: -f3)" --clear-groups \
			env SLURM_CONF="$CONF" "$SLURM_PREFIX/bin/sbatch" -A "$2" -n "$3" -t 5 -D /tmp -o /dev/null -e /dev/null \
			--wrap "sleep $((5 + 5 * k))" >/dev/null || die "sbatch of a warm-up job failed"
		k=$((k + 1))
	done
	wait_for 120 - "the warm-up jobs do not end (see $W/log/slurmctld.log)" lines_at_most 0 slurm squeue -h -o %i
	sleep 70
}

records() { slurm squeue -h -a --states=all -o %i | wc -l; }

fill_users() {
	for u in ${FILL_USERS:-$(awk -F: -v me="$U_USER" '$3 >= 1 && $3 < 65534 && $1 != me { print $1 }' /etc/passwd | head -n 10)}; do
		printf '%s:%s:%s ' "$u" "$(id -u "$u")" "$(id -g "$u")"
	done
}

# fill_to N: held jobs of several users, accounts and partitions until there are N records
fill_to() {
	have=$(records)
	[ "$have" -lt "$1" ] || return 0
	# shellcheck disable=SC2016 # the loop is sh -c's
	awk -v a="$have" -v b=$(($1 - 1)) -v users="$(fill_users)" 'BEGIN {
		n = split(users, u, " ")
		for (i = a; i <= b; i++) { split(u[i % n + 1], f, ":"); print i, f[2], f[3] }
	}' | SLURM_CONF=$CONF xargs -P 4 -n 750 sh -c '
		sbatch=$0
		while [ $# -ge 3 ]; do
			i=$1 uid=$2 gid=$3
			shift 3
			p=batch
			[ $((i % 5)) -ne 0 ] || p=debug
			setpriv --reuid="$uid" --regid="$gid" --clear-groups "$sbatch" --hold -p "$p" -A "acct$((i % 10))" \
				-t 10 -D /tmp -o /dev/null -e /dev/null --wrap true >/dev/null || exit 255
		done' "$SLURM_PREFIX/bin/sbatch" || die "sbatch failed (see $W/log/slurmctld.log)"
	sleep 5
}

# --- slurmrestd, as the unit runs it --------------------------------------------------------------
ENVFILE=$W/slurm-exporter-shim-slurmrestd.env
{
	cat "$PKG_ROOT$U_ENVFILE"
	echo "# added by tests/bench/$LIVE_NAME.sh, as an admin of this Slurm does"
	echo "SLURMRESTD=$SLURM_PREFIX/sbin/slurmrestd"
	echo "SLURM_CONF=$CONF"
} >"$ENVFILE"

# envfile_words: the EnvironmentFile's assignments as NAME=VALUE words (quotes removed, comments
# and blank lines skipped), as systemd reads the plain assignments the package's file holds
envfile_words() {
	sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\)=\(.*\)$/\1=\2/p' "$ENVFILE" |
		sed 's/=\(["'"'"']\)\(.*\)\1[[:space:]]*$/=\2/'
}
# envval NAME: its value (the last assignment)
envval() { envfile_words | sed -n "s/^$1=//p" | tail -n 1; }

# exec_argv: ExecStart's words, $NAME replaced by the words of NAME's value (systemd's split)
exec_argv() {
	for w in $U_EXEC; do
		case $w in
		\$*) envval "${w#\$}" | tr -s ' \t' '\n' | sed '/^$/d' ;;
		*) printf '%s\n' "$w" ;;
		esac
	done
}

# as_unit [WRAPPER...]: the unit's ExecStart as systemd runs it (WRAPPER before the program: strace).
# REST_PID: slurmrestd's (env, setpriv, run-slurmrestd and slurmrestd exec one another; with a
# WRAPPER, its child's).
as_unit() {
	mkdir -m "$U_RUNMODE" "$U_RUNDIR"
	chown "$U_USER:$U_GROUP" "$U_RUNDIR"
	wrapped=$#
	# shellcheck disable=SC2046 # ExecStart's words
	set -- "$@" $(exec_argv | sed "1s|^|$PKG_ROOT|")
	(
		umask "$U_UMASK"
		set -- setpriv --reuid="$U_USER" --regid="$U_GROUP" --init-groups --no-new-privs \
			--inh-caps=-all --bounding-set=-all "$@"
		# the EnvironmentFile's assignments as arguments of env, in the file's order (the last wins)
		while IFS= read -r kv; do
			set -- "$kv" "$@"
		done <<EOF
$(envfile_words | tac)
EOF
		exec env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			USER="$U_USER" LOGNAME="$U_USER" HOME="$U_HOME" SHELL="$U_SHELL" RUNTIME_DIRECTORY="$U_RUNDIR" "$@"
	) >"$W/log/slurmrestd.out" 2>&1 &
	REST_PID=$!
	PIDS="$PIDS $REST_PID"
	i=0
	until [ -S "$SOCK" ]; do
		i=$((i + 1))
		if [ $i -ge 60 ] || ! kill -0 "$REST_PID" 2>/dev/null; then
			cat "$W/log/slurmrestd.out" >&2
			die "slurmrestd did not make $SOCK"
		fi
		sleep 0.5
	done
	if [ "$wrapped" -gt 0 ]; then
		REST_PID=$(pgrep -P "$REST_PID" | head -n 1)
		PIDS="$REST_PID $PIDS"
	fi
}

stop_unit() {
	kill "$REST_PID" 2>/dev/null || true
	wait "$REST_PID" 2>/dev/null || true
	rm -rf "$U_RUNDIR"
}

# as_user CMD...: a command as the unit's user (the shim, curl)
as_user() { setpriv --reuid="$U_USER" --regid="$U_GROUP" --init-groups "$@"; }
rest() { as_user curl -sf --unix-socket "$SOCK" "http://localhost$1"; }

# --- the shim ---------------------------------------------------------------------------------------
# zero_intervals: every --*interval* flag of the shim's --help, at 0, and /jobs' cost rule off
# (--slurmrestd.jobs.max-share 0, when this shim has it): every scrape fetches every document
zero_intervals() {
	"$SHIM_BIN" --help 2>&1 | sed -n -e 's/^ *\(--[a-z.-]*min-interval\) SECONDS.*/\1 0/p' \
		-e 's/^ *\(--slurmrestd.jobs.max-share\) PERCENT.*/\1 0/p' | tr '\n' ' '
}

start_shim() {
	! curl -s -o /dev/null "http://127.0.0.1:$SHIM_PORT/" || die "something already answers on 127.0.0.1:$SHIM_PORT"
	setpriv --reuid="$U_USER" --regid="$U_GROUP" --init-groups "$SHIM_BIN" --slurmctld.url "$CTLD" --mapping.file "$MAPPING" \
		--web.listen-address "127.0.0.1:$SHIM_PORT" --log.level warn "$@" >>"$W/log/shim.out" 2>&1 &
	SHIM_PID=$!
	PIDS="$PIDS $SHIM_PID"
	i=0
	until curl -s -o /dev/null "http://127.0.0.1:$SHIM_PORT/"; do
		i=$((i + 1))
		[ $i -lt 50 ] || die "the shim does not start (see $W/log/shim.out)"
		sleep 0.1
	done
}

stop_shim() {
	kill "$SHIM_PID" 2>/dev/null || true
	wait "$SHIM_PID" 2>/dev/null || true
}

scrape() { curl -sf "http://127.0.0.1:$SHIM_PORT/metrics"; }

passed=0
failed=0
ok() { passed=$((passed + 1)); echo "  ok   - $*"; }
bad() { failed=$((failed + 1)); echo "  FAIL - $*"; }

# --- run ----------------------------------------------------------------------------------------------
start_munge
write_conf
[ -z "$DBD_PREFIX" ] || start_db
start_slurm
[ -z "$DBD_PREFIX" ] || warm_up
echo "tests/bench/$LIVE_NAME.sh, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(uname -srm), $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | sort -u | paste -sd/ -))"
commit=$([ -z "${SLURM_SRC:-}" ] || git -C "$SLURM_SRC" rev-parse HEAD 2>/dev/null || true)
echo "Slurm: $("$SLURM_PREFIX/sbin/slurmctld" -V)${commit:+, commit $commit}"
[ -z "$DBD_PREFIX" ] || echo "accounting: $("$DBD_PREFIX/sbin/slurmdbd" -V)'s slurmdbd ($DBD_PREFIX), $("$MYSQLD" --version | sed 's/ for .*//')"
echo "shim: $("$SHIM_BIN" --version | head -n 1)"
echo "unit: $UNIT"
echo "  User=$U_USER Group=$U_GROUP UMask=$U_UMASK RuntimeDirectory=$U_RUNDIR ($U_RUNMODE)"
echo "  ExecStart=$U_EXEC"
echo "  EnvironmentFile: $PKG_ROOT$U_ENVFILE, plus SLURMRESTD=$(envval SLURMRESTD) SLURM_CONF=$(envval SLURM_CONF)"
echo "  runs: $(exec_argv | sed "1s|^|$PKG_ROOT|" | paste -sd ' ' -)"

# 1. the sandbox, checked on what slurmrestd does (strace), since no systemd runs it here
echo
echo "== slurmrestd under strace, answering every document the shim reads"
mkdir -p "$W/trace"
chown "$U_USER" "$W/trace" # strace runs as the unit's user, as its tracee
as_unit strace -f -qq -o "$W/trace/strace.txt"
REST_VERSION=$(rest /openapi/v3 | tr -d '\134' | grep -o '/slurm/v0\.0\.[0-9]*/' | sort -u | tail -n 1 | cut -d/ -f3)
[ -n "$REST_VERSION" ] || die "slurmrestd names no /slurm/ version in /openapi/v3 (see $W/log/slurmrestd.out)"
for d in nodes shares diag jobs; do
	rest "/slurm/$REST_VERSION/$d" >/dev/null || bad "/slurm/$REST_VERSION/$d through the unit's socket"
done
stop_unit
expand_filter() {
	systemd-analyze syscall-filter "$1" 2>/dev/null | sed -n '/^@/!{s/^ *//;/^#/d;/^$/d;p}' |
		while read -r x; do
			case $x in @*) expand_filter "$x" ;; *) echo "$x" ;; esac
		done
}
allowed=$W/allowed.txt
denied=$W/denied.txt
sed -n 's/^SystemCallFilter=\([^~]\)/\1/p' "$UNIT" | tr ' ' '\n' | while read -r f; do
	[ -n "$f" ] && expand_filter "$f"
done | sort -u >"$allowed"
sed -n 's/^SystemCallFilter=~//p' "$UNIT" | tr ' ' '\n' | while read -r f; do
	[ -n "$f" ] && expand_filter "$f"
done | sort -u >"$denied"
# what ran under the unit: from the exec of its ExecStart on (setpriv's own calls are systemd's)
awk -v p="execve(\"$PKG_ROOT/usr/share/slurm-exporter-shim/run-slurmrestd\"" 'index($0, p) { on = 1 } on' \
	"$W/trace/strace.txt" >"$W/strace.txt"
made=$(sed -n 's/^[0-9]\{1,\} \{1,\}\([a-z_0-9]\{1,\}\)(.*/\1/p' "$W/strace.txt" | sort -u)
outside=""
for s in $made; do
	if ! grep -qx "$s" "$allowed" || grep -qx "$s" "$denied"; then outside="$outside $s"; fi
done
echo "  slurmrestd made $(echo "$made" | wc -w) distinct system calls ($(wc -l <"$W/strace.txt") in all)"
[ -z "$outside" ] && ok "every one is allowed by SystemCallFilter=$(sed -n 's/^SystemCallFilter=//p' "$UNIT" | paste -sd ' ' -)" ||
	bad "outside the unit's SystemCallFilter:$outside"
wx=$(grep -E '(mmap|mprotect|pkey_mprotect)\(.*PROT_WRITE\|PROT_EXEC|PROT_EXEC\|PROT_WRITE' "$W/strace.txt" | head -n 3)
[ -z "$wx" ] && ok "no mapping both writable and executable (MemoryDenyWriteExecute=yes)" || bad "W+X mapping: $wx"
fams=$(sed -n 's/^[0-9]* *socket(\(AF_[A-Z0-9]*\).*/\1/p' "$W/strace.txt" | sort -u | paste -sd ' ' -)
extra=""
for f in $fams; do
	case " $(ukey RestrictAddressFamilies) " in *" $f "*) ;; *) extra="$extra $f" ;; esac
done
# glibc's getaddrinfo(AI_ADDRCONFIG) asks the kernel for the host's addresses over AF_NETLINK
# (RTM_GETADDR) before it connects; under the unit that socket() fails with EAFNOSUPPORT and glibc
# takes both IPv4 and IPv6 as configured (check_pf.c), as in the shim's own unit
nl_other=$(grep -A3 'socket(AF_NETLINK' "$W/strace.txt" | grep -E '^[0-9]+ +sendto\(' | grep -vc 'RTM_GETADDR' || true)
if [ -z "$extra" ]; then
	ok "sockets: $fams (RestrictAddressFamilies=$(ukey RestrictAddressFamilies))"
elif [ "$extra" = " AF_NETLINK" ] && [ "$nl_other" = 0 ]; then
	ok "sockets: $fams; AF_NETLINK only for getaddrinfo's RTM_GETADDR probe, which glibc does without (RestrictAddressFamilies=$(ukey RestrictAddressFamilies))"
else
	bad "sockets outside RestrictAddressFamilies:$extra"
fi
ns=$(grep -E '(unshare|clone3?|setns)\(.*CLONE_NEW' "$W/strace.txt" | head -n 3)
uns=$(sed -n 's/^[0-9]* *unshare(\([^)]*\)).*/\1/p' "$W/strace.txt" | sort -u | paste -sd ' ' -)
[ -z "$ns" ] && ok "no namespace made (RestrictNamespaces=yes); unshare($uns) only" || bad "namespaces: $ns"
writes=$(grep -E '^[0-9]+ +(open|openat|creat|mkdir|mknod|unlink|rename|bind)[a-z0-9]*\(' "$W/strace.txt" |
	grep -E 'O_WRONLY|O_RDWR|O_CREAT|mkdir|mknod|unlink|rename|bind' | grep -v ' = -1 ' |
	grep -o '"/[^"]*"' | tr -d '"' | grep -v -e "^$U_RUNDIR/" -e '^/dev/null$' | sort -u | paste -sd ' ' -)
[ -z "$writes" ] && ok "nothing written outside $U_RUNDIR (ProtectSystem=strict, PrivateTmp=yes)" || bad "written outside $U_RUNDIR: $writes"
opened=$(grep -E '^[0-9]+ +(open|openat)\(' "$W/strace.txt" | grep -v ' = -1 ' | grep -o '"/[^"]*"' | tr -d '"' |
	sed 's|^\(/[^/]*/[^/]*\).*|\1|' | sort -u | paste -sd ' ' -)
echo "  files opened, by their first two path components: $opened"
case " $opened " in
*" /home/"* | *" /root/"* | *" /run/user"*) bad "slurmrestd opened a file under /home, /root or /run/user (ProtectHome=yes)" ;;
*) ok "nothing under /home, /root or /run/user opened (ProtectHome=yes)" ;;
esac

# 2. the unit's socket and who reaches it
echo
echo "== slurmrestd as the unit runs it"
as_unit
echo "  $(sed -n '1p' "$W/log/slurmrestd.out")"
st=$(stat -c '%a %U' "$U_RUNDIR")
[ "$st" = "${U_RUNMODE#0} $U_USER" ] && ok "$U_RUNDIR: mode $st" || bad "$U_RUNDIR: mode and owner $st"
echo "  socket: $(stat -c '%A %U' "$SOCK") $SOCK"
if rest /slurm/"$REST_VERSION"/ping >/dev/null; then ok "the unit's user ($U_USER) is answered (rest_auth/local)"; else bad "the unit's user is refused"; fi
other=$(awk -F: -v me="$U_USER" '$3 >= 1 && $3 < 65534 && $1 != me { print $1; exit }' /etc/passwd)
if setpriv --reuid="$other" --regid="$(id -g "$other")" --clear-groups \
	curl -s -o /dev/null --unix-socket "$SOCK" "http://localhost/slurm/$REST_VERSION/ping" 2>/dev/null; then
	bad "another user ($other) reached the socket"
else
	ok "another user ($other) cannot reach the socket (the 0700 RuntimeDirectory)"
fi
openapi=$(rest /openapi/v3 | wc -c)
echo "  /openapi/v3 (read once by the shim, to learn the API version $REST_VERSION): $openapi bytes"

# 3. node states, jobs and fairshare, served from slurmrestd
echo
echo "== the shim with --slurmrestd.url unix:$SOCK --slurmrestd.jobs, as $U_USER"
slurm scontrol update nodename=n2 state=drain reason=live-rest-unit
slurm scontrol update nodename=n3 state=down reason=live-rest-unit
u1=$(fill_users | cut -d' ' -f1)
setpriv --reuid="$(echo "$u1" | cut -d: -f2)" --regid="$(echo "$u1" | cut -d: -f3)" --clear-groups \
	env SLURM_CONF="$CONF" "$SLURM_PREFIX/bin/sbatch" -w n4 -n 16 -A acct1 -t 60 -D /tmp -o /dev/null \
	-e /dev/null --wrap 'sleep 3600' >/dev/null || die "sbatch of the running job failed"
fill_to 50
wait_for 30 - "the job on n4 does not start (see $W/log/slurmctld.log)" lines_at_least 1 slurm squeue -h -t R -o %i
sleep 2
# shellcheck disable=SC2046 # the flags are words
start_shim --slurmrestd.url "unix:$SOCK" --slurmrestd.jobs $(zero_intervals)
scrape >"$W/scrape.txt" || die "the shim's /metrics failed (see $W/log/shim.out)"
stop_shim
metric() { grep "^$1[{ ]" "$W/scrape.txt" || true; }
metric slurm_exporter_shim_up | sed 's/^/  /'
n_rest=$(grep -c '^slurm_exporter_shim_row_fidelity{.*upstream="slurmrestd"' "$W/scrape.txt" || true)
n_all=$(grep -c '^slurm_exporter_shim_row_fidelity{' "$W/scrape.txt" || true)
echo "  families served from slurmrestd: $n_rest of $n_all"
for f in slurm_node_cpu_alloc slurm_nodes_drain slurm_nodes_down slurm_cpus_total slurm_queue_pending \
	slurm_queue_running slurm_account_jobs_pending slurm_user_jobs_running; do
	up=$(sed -n "s/^slurm_exporter_shim_row_fidelity{family=\"$f\",.*upstream=\"\([a-z]*\)\".*/\1/p" "$W/scrape.txt")
	case $up in
	slurmrestd) ok "$f served from slurmrestd" ;;
	"") bad "$f not served" ;;
	*) bad "$f served from $up, not slurmrestd" ;;
	esac
done
# node states: the status label of slurm_node_cpu_alloc against sinfo -N's StateLong
want=$(slurm sinfo -h -N -O NodeList:20,StateLong:30 | awk '{ print $1, $2 }' | sort -u)
got=$(sed -n 's/^slurm_node_cpu_alloc{node="\([^"]*\)",status="\([^"]*\)"}.*/\1 \2/p' "$W/scrape.txt" | sort -u)
echo "  node states (sinfo -N StateLong): $(echo "$want" | paste -sd, - | sed 's/,/, /g')"
[ -n "$got" ] && [ "$got" = "$want" ] && ok "every node's status label is sinfo's" ||
	bad "node status labels: $(echo "$got" | paste -sd, -)"
for s in drain down alloc idle mix; do
	want=$(slurm sinfo -h -N -O NodeList:20,StateLong:30 | awk -v s="$s" 'index($2, s) == 1 { n[$1] = 1 } END { print length(n) }')
	got=$(sed -n "s/^slurm_nodes_$s \([0-9]*\)$/\1/p" "$W/scrape.txt")
	[ "$got" = "$want" ] && ok "slurm_nodes_$s $got (sinfo: $want)" || bad "slurm_nodes_$s '$got', sinfo $want"
done
for s in pending running; do
	want=$(slurm squeue -h -a -r -t "$s" -o %i | wc -l)
	got=$(sed -n "s/^slurm_queue_$s \([0-9]*\)$/\1/p" "$W/scrape.txt")
	[ "$got" = "$want" ] && ok "slurm_queue_$s $got (squeue: $want)" || bad "slurm_queue_$s '$got', squeue $want"
done
# FairShare. The old exporter ran `sshare -n -P -o account,fairshare` as root (its unit has no User=)
# and read it so: a line starting with two spaces skipped, the account trimmed, the FairShare parsed
# (0 when empty: Slurm 25.11's sshare prints none on an account row) and the last line of an account
# winning (" root|<x>", root's own user row, after "root|"). legacy_fairshare prints "account value".
legacy_fairshare() {
	slurm sshare -n -P -o account,fairshare | awk -F'|' 'substr($0, 1, 2) != "  " && index($0, "|") {
		a = $1; gsub(/^ +| +$/, "", a); v = ($2 ~ /^[0-9.eE+-]+$/) ? $2 + 0 : 0; fs[a] = v }
		END { for (a in fs) printf "%s %.6f\n", a, fs[a] }' | sort
}
# sshare_rows: every row of sshare -a as "account user FairShare LevelFS" (user "-" on an account
# row, "-" for an empty value); shares_rows: the same from slurmrestd's /shares (fairshare.factor,
# fairshare.level: a USER row's parent is its account), read through the unit's socket
sshare_rows() {
	slurm sshare -a -n -P -o account,user,fairshare,levelfs | awk -F'|' '{
		a = $1; gsub(/ /, "", a); for (i = 2; i <= 4; i++) if ($i == "") $i = "-"
		printf "%s %s %s %s\n", a, $2, ($3 == "-") ? "-" : sprintf("%.6f", $3), ($4 == "-" || $4 == "inf") ? $4 : sprintf("%.6f", $4) }' | sort
}
shares_rows() {
	rest "/slurm/$REST_VERSION/shares" | python3 -c 'import json, sys
def num(v):
    if not v.get("set"):
        return "inf" if v.get("infinite") else "-"
    return "%.6f" % v["number"]
for s in json.load(sys.stdin)["shares"]["shares"]:
    user = "USER" in s.get("type", [])
    # sshare prints no FairShare on an account row (slurmrestd gives 0 there)
    print(s["parent"] if user else s["name"], s["name"] if user else "-", num(s["fairshare"]["factor"]) if user else "-",
          num(s["fairshare"]["level"]))' | sort
}
echo "  /shares: $(rest "/slurm/$REST_VERSION/shares" | tr -d ' \n' | cut -c1-120)..."
if [ -z "$(slurm sshare -a -n -P -o account 2>/dev/null)" ]; then
	echo "  skip - slurm_account_fairshare: sshare lists no association (no slurmdbd accounting here; set DBD_PREFIX), /shares neither"
	[ -z "$(metric slurm_account_fairshare)" ] && ok "slurm_account_fairshare left out, as sshare has nothing" ||
		bad "slurm_account_fairshare served without associations: $(metric slurm_account_fairshare | head -n 3)"
else
	# FairShare changes at each priority calculation (every minute, with the running job's usage):
	# sshare before and after the scrape and the /shares read must agree, else once more
	# shellcheck disable=SC2046 # the flags are words
	start_shim --slurmrestd.url "unix:$SOCK" $(zero_intervals)
	tries=0
	while :; do
		before=$(legacy_fairshare; sshare_rows)
		scrape >"$W/fs-scrape.txt" || die "the shim's /metrics failed (see $W/log/shim.out)"
		shares_rows >"$W/fs-shares.txt"
		after=$(legacy_fairshare; sshare_rows)
		tries=$((tries + 1))
		[ "$before" != "$after" ] && [ $tries -lt 4 ] || break
	done
	stop_shim
	legacy_fairshare >"$W/fs-legacy.txt"
	sshare_rows >"$W/fs-sshare.txt"
	sed -n 's/^slurm_account_fairshare{account="\([^"]*\)"} \(.*\)$/\1 \2/p' "$W/fs-scrape.txt" |
		awk '{ printf "%s %.6f\n", $1, $2 }' | sort >"$W/fs-shim.txt"
	echo "  account: slurm_account_fairshare | the old exporter's reading of sshare -n -P -o account,fairshare | sshare -a LevelFS | /shares fairshare.level"
	join -a 1 -a 2 -e - -o 0,1.2,2.2 "$W/fs-shim.txt" "$W/fs-legacy.txt" | while read -r acc shim legacy; do
		printf '    %-8s %-10s | %-10s | %-10s | %s\n' "$acc" "$shim" "$legacy" \
			"$(awk -v a="$acc" '$1 == a && $2 == "-" { print $4 }' "$W/fs-sshare.txt")" \
			"$(awk -v a="$acc" '$1 == a && $2 == "-" { print $4 }' "$W/fs-shares.txt")"
	done
	if [ -s "$W/fs-shim.txt" ] && cmp -s "$W/fs-shim.txt" "$W/fs-legacy.txt"; then
		ok "slurm_account_fairshare is the old exporter's value for each of its $(wc -l <"$W/fs-legacy.txt") accounts (six decimals)"
	else
		bad "slurm_account_fairshare differs from the old exporter's reading of sshare: $(diff "$W/fs-legacy.txt" "$W/fs-shim.txt" | grep '^[<>]' | paste -sd, -)"
	fi
	nu=$(awk '$2 != "-"' "$W/fs-sshare.txt" | wc -l)
	if [ "$before" = "$after" ] && cmp -s "$W/fs-sshare.txt" "$W/fs-shares.txt"; then
		ok "every one of sshare -a's $(wc -l <"$W/fs-sshare.txt") rows ($nu user rows) has its FairShare and LevelFS in the unit's /shares"
	else
		bad "sshare -a and /shares differ$([ "$before" = "$after" ] || echo ' (FairShare changed during the check)'): $(diff "$W/fs-sshare.txt" "$W/fs-shares.txt" | grep '^[<>]' | head -n 6 | paste -sd, -)"
	fi
	echo "  user rows with usage (account user FairShare LevelFS, sshare -a = /shares):"
	slurm sshare -a -n -P -o account,user,rawusage | awk -F'|' '$2 != "" && $3 > 0 { a = $1; gsub(/ /, "", a); print a, $2 }' |
		while read -r acc usr; do
			printf '    %s\n' "$(awk -v a="$acc" -v u="$usr" '$1 == a && $2 == u' "$W/fs-shares.txt")"
		done
	nfs=$(awk '$2 != "-" { print $3 }' "$W/fs-shares.txt" | sort -u | wc -l)
	[ "$nfs" -gt 1 ] && ok "FairShare differs between user rows ($nfs distinct values)" || bad "every user row has the same FairShare"
fi

# 4. the cost per scrape
echo
echo "== CPU per scrape, ms: mean +- sd (min / median / max) over $SCRAPES runs, slurmctld (idle rate" \
	"subtracted; 'stat': the mean from /proc's ticks); '+N ms in slurmrestd': slurmrestd's own CPU per run" \
	"${DBD_PID:+(and the same for slurmdbd)}"
TSV=$W/means.tsv
: >"$TSV"
# row NAME CMD...: one row; the summary keeps slurmctld's mean and slurmrestd's (and slurmdbd's) per
# run less its idle rate over the row's wall time
row() {
	name=$1
	shift
	t0=$(date +%s.%N)
	$LIVE_CPU run "$CTLD_PID" "$IDLE_RATE" "$SCRAPES" "$SCRAPE_EVERY" "$name" --also "$REST_PID" \
		${DBD_PID:+--also "$DBD_PID:slurmdbd"} -- "$@" | tee "$W/row.txt"
	t1=$(date +%s.%N)
	awk -v n="$LEVEL" -v name="$name" -v idle="$REST_IDLE" -v didle="${DBD_IDLE:-}" \
		-v wall="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" \
		-v runs="$SCRAPES" 'function also(who,  r) {
			if (!match($0, "\\+[0-9.]+ ms in " who)) return ""
			r = substr($0, RSTART + 1, RLENGTH - 1); sub(/ .*/, "", r); return r
		}
		NR == 1 { for (i = 2; i <= NF; i++) if ($i == "+-") break
		printf "%s\t%s\t%s\t%s", n, name, $(i - 1), ms(also("slurmrestd") - idle * wall / runs)
		if (didle != "") printf "\t%s", ms(also("slurmdbd") - didle * wall / runs)
		print "" }
		function ms(v,  s) { s = sprintf("%.1f", v); return s == "-0.0" ? "0.0" : s }' "$W/row.txt" >>"$TSV"
}
SCRAPE="curl -sf -o /dev/null http://127.0.0.1:$SHIM_PORT/metrics"
for n in $RECORDS; do
	fill_to "$n"
	LEVEL=$(records)
	echo
	echo "$LEVEL job records:"
	IDLE_RATE=$($LIVE_CPU idle "$CTLD_PID" "$(awk -v n="$SCRAPES" -v e="$SCRAPE_EVERY" 'BEGIN { print n * e }')")
	REST_IDLE=$($LIVE_CPU idle "$REST_PID" "$(awk -v n="$SCRAPES" -v e="$SCRAPE_EVERY" 'BEGIN { print n * e }')")
	[ -z "${DBD_PID:-}" ] || DBD_IDLE=$($LIVE_CPU idle "$DBD_PID" "$(awk -v n="$SCRAPES" -v e="$SCRAPE_EVERY" 'BEGIN { print n * e }')")
	if [ -n "$DBD_PID" ]; then
		echo "  (idle: slurmctld $IDLE_RATE, slurmrestd $REST_IDLE, slurmdbd $DBD_IDLE ms of CPU per second;" \
			"slurmrestd's and slurmdbd's are subtracted in the table below)"
	else
		echo "  (idle: slurmctld $IDLE_RATE, slurmrestd $REST_IDLE ms of CPU per second; slurmrestd's is subtracted in the table below)"
	fi
	# shellcheck disable=SC2046
	start_shim $(zero_intervals)
	row "shim, no slurmrestd" sh -c "$SCRAPE"
	stop_shim
	# shellcheck disable=SC2046
	start_shim --slurmrestd.url "unix:$SOCK" $(zero_intervals)
	scrape >/dev/null # the API version discovery
	row "shim + slurmrestd (nodes, shares, diag)" sh -c "$SCRAPE"
	stop_shim
	# shellcheck disable=SC2046
	start_shim --slurmrestd.url "unix:$SOCK" --slurmrestd.jobs $(zero_intervals)
	scrape >/dev/null
	row "shim + slurmrestd + --slurmrestd.jobs" sh -c "$SCRAPE"
	stop_shim
	for d in nodes shares diag jobs; do
		row "slurmrestd /$d alone" setpriv --reuid="$U_USER" --regid="$U_GROUP" --init-groups \
			curl -sf -o /dev/null --unix-socket "$SOCK" "http://localhost/slurm/$REST_VERSION/$d"
	done
	echo "  /jobs: $(rest "/slurm/$REST_VERSION/jobs" | wc -c) bytes, /nodes: $(rest "/slurm/$REST_VERSION/nodes" | wc -c) bytes," \
		"/shares: $(rest "/slurm/$REST_VERSION/shares" | wc -c) bytes ($(slurm sshare -a -n -P -o account | wc -l) associations)"
done
echo
echo "Means (ms of CPU per scrape: slurmctld + slurmrestd${DBD_PID:+ + slurmdbd}):"
awk -F '\t' '
	!($1 in seen_l) { seen_l[$1] = 1; levels[++nl] = $1 }
	!($2 in seen_r) { seen_r[$2] = 1; rows[++nr] = $2 }
	{ v[$1, $2] = $3 " + " $4 (NF > 4 ? " + " $5 : "") }
	END {
		printf "| row |"; for (i = 1; i <= nl; i++) printf " %s records |", levels[i]; print ""
		printf "|---|"; for (i = 1; i <= nl; i++) printf "---:|"; print ""
		for (r = 1; r <= nr; r++) {
			printf "| %s |", rows[r]
			for (i = 1; i <= nl; i++) printf " %s |", ((levels[i], rows[r]) in v ? v[levels[i], rows[r]] : "")
			print ""
		}
	}' "$TSV"
echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
