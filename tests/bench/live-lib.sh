# shellcheck shell=sh
# shellcheck disable=SC2034,SC2153 # variables set for, and by, the scripts that source it
# tests/bench/live-lib.sh: a private Slurm cluster on 127.0.0.1 for the live scripts (sourced by
# tests/bench/live-slurm.sh, tests/bench/live-failover.sh and tests/bench/live-rest-jobs.sh; it runs
# nothing itself).
#
# It drives an installed Slurm (SLURM_PREFIX) and never builds one. The caller sets, before
# sourcing it:
#   LIVE_NAME     the prefix of its messages (e.g. live-slurm)
#   SLURM_PREFIX  the installed Slurm
#   BASE_PORT     slurmctld's port; the four slurmd use the next four
#   KEEP          1: keep the work directory at exit
#   WORKDIR       optional: the work directory (default: a new one under /tmp, removed at exit)
# and may set, before write_conf:
#   CTLD_HOSTS    the SlurmctldHost lines (default: one, localhost(127.0.0.1))
#   CONF_EXTRA    more slurm.conf lines (default none)
#   CLUSTER       ClusterName (default livebench)
# Then: live_setup (the work directory $W, the cleanup at exit), start_munge, write_conf,
# start_ctld, start_slurmds, wait_metrics, wait_idle, fill_to (held jobs of FILL_USERS), start_rest,
# start_shim/stop_shim. Every daemon started is in PIDS and stopped at exit, by its PID.

die() {
	echo "$LIVE_NAME: $*" >&2
	exit 1
}

PIDS=""

cleanup() {
	for p in $PIDS; do
		kill "$p" 2>/dev/null || true
	done
	sleep 1
	for p in $PIDS; do
		kill -9 "$p" 2>/dev/null || true
	done
	if [ "$KEEP" = 1 ]; then
		echo "$LIVE_NAME: kept $W" >&2
	elif [ -z "${WORKDIR:-}" ]; then
		rm -rf "$W"
	fi
}

# live_setup: the work directory $W (state, logs, the config) and the cleanup at exit
live_setup() {
	ME=$(id -un)
	W=${WORKDIR:-$(mktemp -d "/tmp/$LIVE_NAME.XXXXXX")}
	mkdir -p "$W/munge" "$W/state" "$W/spool" "$W/log" "$W/run"
	chmod 700 "$W/munge"
	CONF=$W/slurm.conf
	REST_SOCK=$W/rest/slurmrestd.sock
	trap cleanup EXIT
	trap 'exit 130' INT TERM
}

# --- the cluster -----------------------------------------------------------------------------
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
ClusterName=${CLUSTER:-livebench}
${CTLD_HOSTS:-SlurmctldHost=localhost(127.0.0.1)}
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
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
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
${CONF_EXTRA:-}
EOF
}

slurm() {
	cmd=$1
	shift
	SLURM_CONF=$CONF "$SLURM_PREFIX/bin/$cmd" "$@"
}

# start_ctld NAME CONFFILE [WRAPPER...]: slurmctld in the foreground of a background job, its
# output in $W/log/NAME.out; CTLD_PID is its PID (a WRAPPER must exec it, so the PID stays)
start_ctld() {
	name=$1 conf=$2
	shift 2
	"$@" "$SLURM_PREFIX/sbin/slurmctld" -D -i -f "$conf" >>"$W/log/$name.out" 2>&1 &
	CTLD_PID=$!
	PIDS="$PIDS $CTLD_PID"
}

start_slurmds() {
	for n in n1 n2 n3 n4; do
		"$SLURM_PREFIX/sbin/slurmd" -D -N "$n" -f "$CONF" >"$W/log/slurmd.$n.out" 2>&1 &
		PIDS="$PIDS $!"
	done
}

# wait_metrics URL PID: until slurmctld PID answers URL/metrics/scheduler with a 200
wait_metrics() {
	i=0
	until curl -sf -o /dev/null "$1/metrics/scheduler"; do
		i=$((i + 1))
		[ $i -lt 60 ] || die "slurmctld's metrics do not answer on $1 (see $W/log/slurmctld*.log)"
		kill -0 "$2" 2>/dev/null || die "slurmctld exited (see $W/log/slurmctld*.log)"
		sleep 1
	done
}

wait_idle() {
	i=0
	while [ "$(slurm sinfo -h -o %D -t idle | awk '{ s += $1 } END { print s + 0 }')" -lt 4 ]; do
		i=$((i + 1))
		if [ $i -ge 30 ]; then
			echo "$LIVE_NAME: not every node is idle after 30 s (see $W/log/slurmd.*); measuring anyway" >&2
			break
		fi
		sleep 1
	done
}

# --- the queue ---------------------------------------------------------------------------------
# job records in slurmctld (a pending array would be one record until its tasks start)
records() {
	slurm squeue -h -a --states=all -o %i | wc -l
}

# The jobs' owners, as "name:uid:gid" words. slurmctld names a pending job's user with one
# getpwuid() per job and walk, except root's (uid 0 is "root" without a lookup): jobs of root
# would make every job walk look cheaper than at a site. So, run as root, the script submits as
# FILL_USERS (default: the first ten accounts with a uid from 1 to 65533 in /etc/passwd), through
# setpriv; run as anyone else, as that user.
fill_users() {
	if [ "$(id -u)" != 0 ]; then
		echo "$ME:$(id -u):$(id -g)"
		return
	fi
	for u in ${FILL_USERS:-$(awk -F: '$3 >= 1 && $3 < 65534 { print $1 }' /etc/passwd | head -n 10)}; do
		printf '%s:%s:%s ' "$u" "$(id -u "$u")" "$(id -g "$u")"
	done
}

# Submit held jobs until there are $1 records, 4 sbatch at a time: owners, accounts and partitions
# vary, so the per-user, per-account and per-partition sums have several series.
fill_to() {
	have=$(records)
	[ "$have" -lt "$1" ] || return 0
	chmod 755 "$W" "$W/munge" # the owners read the config and reach the munge socket
	# one line per job: its number, owner uid and gid
	# shellcheck disable=SC2016 # the loop is sh -c's, expanded there
	awk -v a="$have" -v b=$(($1 - 1)) -v users="$(fill_users)" 'BEGIN {
		n = split(users, u, " ")
		for (i = a; i <= b; i++) { split(u[i % n + 1], f, ":"); print i, f[2], f[3] }
	}' | SLURM_CONF=$CONF xargs -P 4 -n 750 sh -c '
		sbatch=$0 me=$(id -u)
		while [ $# -ge 3 ]; do
			i=$1 uid=$2 gid=$3
			shift 3
			as=""
			[ "$uid" = "$me" ] || as="setpriv --reuid=$uid --regid=$gid --clear-groups"
			p=batch
			[ $((i % 5)) -ne 0 ] || p=debug
			$as "$sbatch" --hold -p "$p" -A "acct$((i % 10))" -t 10 -D /tmp -o /dev/null -e /dev/null \
				--wrap true >/dev/null || exit 255
		done' "$SLURM_PREFIX/bin/sbatch" || die "sbatch failed (see $W/log/slurmctld.log)"
	# let the scheduler's passes over the new jobs end before idle is measured
	sleep 5
}

REST_PID=""
REST_VERSION=""
# start_rest [LISTEN [AUTH]]: slurmrestd on LISTEN (default unix:$REST_SOCK) with AUTH (default
# rest_auth/local: the peer's uid; root's requests run as slurmrestd's user). It refuses to run
# as root or as SlurmUser, and a release build refuses SLURMRESTD_SECURITY=disable_user_check,
# so: as root it is started as REST_USER (-u/-g); run by anyone else, that user is SlurmUser,
# and it is not started. REST_VERSION: the newest data parser it lists (empty: none).
# REST_CURL: curl's arguments that reach it, before the path.
start_rest() {
	listen=${1:-unix:$REST_SOCK} auth=${2:-rest_auth/local}
	[ -x "$SLURM_PREFIX/sbin/slurmrestd" ] || return 0
	if [ "$(id -u)" != 0 ]; then
		echo "$LIVE_NAME: slurmrestd cannot run as SlurmUser ($ME): not started (run as root for it)" >&2
		return 0
	fi
	mkdir -p "$W/rest"
	chown "$REST_USER" "$W/rest"
	chmod 755 "$W" "$W/munge" # REST_USER reads the config and reaches the munge socket
	case $listen in
	unix:*) REST_CURL="--unix-socket ${listen#unix:} http://localhost" ;;
	*) REST_CURL="http://$listen" ;;
	esac
	# with rest_auth/jwt, slurmrestd passes the client's token on only when started with
	# SLURM_JWT=daemon (Slurm's jwt.html); otherwise auth/munge rejects every token
	if [ "$auth" = rest_auth/jwt ]; then set -- env SLURM_JWT=daemon; else set --; fi
	SLURM_CONF=$CONF "$@" "$SLURM_PREFIX/sbin/slurmrestd" -u "$REST_USER" -g "$(id -gn "$REST_USER")" \
		-a "$auth" "$listen" >"$W/log/slurmrestd.out" 2>&1 &
	REST_PID=$!
	PIDS="$PIDS $REST_PID"
	i=0
	# shellcheck disable=SC2086 # REST_CURL is words
	until [ "$(curl -s -o /dev/null -w '%{http_code}' $REST_CURL/openapi/v3)" != 000 ]; do
		i=$((i + 1))
		if [ $i -ge 20 ] || ! kill -0 "$REST_PID" 2>/dev/null; then
			echo "$LIVE_NAME: slurmrestd does not start (see $W/log/slurmrestd.out)" >&2
			REST_PID=""
			return 0
		fi
		sleep 0.5
	done
}

# rest_version [CURL_ARGS...]: REST_VERSION, the newest data parser slurmrestd lists: paths look
# like "\/slurm\/v0.0.44\/jobs" in /openapi/v3 (JSON escapes the slashes)
rest_version() {
	# shellcheck disable=SC2086 # REST_CURL is words
	REST_VERSION=$(curl -s "$@" $REST_CURL/openapi/v3 | tr -d '\134' |
		grep -o '/slurm/v0\.0\.[0-9]*/' | sort -u | tail -n 1 | cut -d/ -f3)
}

# --- the shim ---------------------------------------------------------------------------------
SHIM_PID=""
# start_shim UPSTREAM FLAGS...: the shim against UPSTREAM on SHIM_PORT, log at SHIM_LOG_LEVEL
# (default warn) appended to SHIM_LOG (default $W/log/shim.out)
start_shim() {
	up=$1
	shift
	"$SHIM_BIN" --slurmctld.url "$up" --mapping.file "$MAPPING" --web.listen-address "127.0.0.1:$SHIM_PORT" \
		--log.level "${SHIM_LOG_LEVEL:-warn}" "$@" >>"${SHIM_LOG:-$W/log/shim.out}" 2>&1 &
	SHIM_PID=$!
	PIDS="$PIDS $SHIM_PID"
	i=0
	until curl -s -o /dev/null "http://127.0.0.1:$SHIM_PORT/"; do # the status page never fetches
		i=$((i + 1))
		[ $i -lt 50 ] || die "the shim does not start (see ${SHIM_LOG:-$W/log/shim.out})"
		sleep 0.1
	done
}

stop_shim() {
	kill "$SHIM_PID" 2>/dev/null || true
	wait "$SHIM_PID" 2>/dev/null || true
}
