#!/bin/sh
# bench/live-slurm.sh: what a scrape costs a real slurmctld, measured (issue 15).
#
# Reuses an installed Slurm 25.11 (it never downloads or builds one), starts a private cluster on
# 127.0.0.1 only (its own munged, one slurmctld, four slurmd in multiple-slurmd mode, optionally
# slurmrestd on a unix socket), fills the queue to each RECORDS level with held jobs (the cost of a
# job walk follows job records, not array tasks, and a held job is a record that never runs), and
# prints slurmctld's CPU time per scrape (utime + stime from /proc/PID/stat, over SCRAPES scrapes,
# less slurmctld's idle CPU over the same time) for:
#   old        the old exporter's commands (0.20): 4 sinfo, 4 squeue, sdiag, as
#              /work/shared/reference/legacy-exporter.md lists them
#   shim       the shim with its default intervals, time-scaled: SCRAPES scrapes SCRAPE_EVERY s
#              apart stand for scrapes P s apart, and the shim's intervals (5 s and 25 s) are divided
#              by the same factor (one row per P in PROM_INTERVALS)
#   shim-0     the shim with every interval 0: every scrape fetches the five endpoints
#   /metrics/* each endpoint alone, fetched with curl
#   rest-jobs  slurmrestd's /slurm/VERSION/jobs (when SLURM_PREFIX has sbin/slurmrestd), with
#              slurmrestd's own CPU per request beside it
# It is not part of scripts/test.sh: it needs an installed Slurm and takes minutes (submitting
# 20,000 jobs with sbatch alone takes a few).
#
# Usage (from the repository root, after make):
#   SLURM_PREFIX=/opt/slurm-25.11 bench/live-slurm.sh
# Environment:
#   SLURM_PREFIX   required: sbin/slurmctld, sbin/slurmd (built with --enable-multiple-slurmd),
#                  bin/sbatch, bin/squeue, bin/sinfo, bin/sdiag, bin/scontrol
#   MUNGED         munged binary (default: munged on PATH, else /usr/sbin/munged)
#   SHIM_BIN       the shim (default ./slurm-exporter-shim); MAPPING the table it loads
#                  (default mappings/prometheus-slurm-exporter.json)
#   RECORDS        job record levels, ascending (default "50 5000 20000")
#   SCRAPES        scrapes per measurement (default 20); SCRAPE_EVERY seconds from the start of
#                  one to the start of the next (default 0.5)
#   PROM_INTERVALS the Prometheus scrape intervals the "shim" rows stand for (default "15 30")
#   BASE_PORT      slurmctld's port; slurmd use the next four, the shim BASE_PORT+10 (default 16817)
#   WORKDIR        state, logs and the config (default: a new directory under /tmp, removed at the
#                  end unless KEEP=1)
# Runs as any user: SlurmUser and SlurmdUser are the user running it. Every daemon it started is
# stopped at exit, by its PID. Output: one table per RECORDS level, in milliseconds of slurmctld CPU
# per scrape.
set -eu

SLURM_PREFIX=${SLURM_PREFIX:-}
SHIM_BIN=${SHIM_BIN:-./slurm-exporter-shim}
MAPPING=${MAPPING:-mappings/prometheus-slurm-exporter.json}
RECORDS=${RECORDS:-50 5000 20000}
SCRAPES=${SCRAPES:-20}
SCRAPE_EVERY=${SCRAPE_EVERY:-0.5}
PROM_INTERVALS=${PROM_INTERVALS:-15 30}
BASE_PORT=${BASE_PORT:-16817}
KEEP=${KEEP:-0}

die() {
	echo "live-slurm: $*" >&2
	exit 1
}

[ -n "$SLURM_PREFIX" ] || die "set SLURM_PREFIX to an installed Slurm 25.11 (this script does not build one)"
for b in sbin/slurmctld sbin/slurmd bin/sbatch bin/squeue bin/sinfo bin/sdiag bin/scontrol; do
	[ -x "$SLURM_PREFIX/$b" ] || die "$SLURM_PREFIX/$b not found"
done
MUNGED=${MUNGED:-$(command -v munged || echo /usr/sbin/munged)}
[ -x "$MUNGED" ] || die "munged not found (set MUNGED)"
[ -x "$SHIM_BIN" ] || die "$SHIM_BIN not found (run make first)"
[ -r "$MAPPING" ] || die "$MAPPING not found (run from the repository root)"
command -v curl >/dev/null || die "curl not found"
MAPPING=$(cd "$(dirname "$MAPPING")" && pwd)/$(basename "$MAPPING")

HZ=$(getconf CLK_TCK)
ME=$(id -un)
W=${WORKDIR:-$(mktemp -d /tmp/live-slurm.XXXXXX)}
mkdir -p "$W/munge" "$W/state" "$W/spool" "$W/log" "$W/run"
chmod 700 "$W/munge"
CONF=$W/slurm.conf
CTLD_PORT=$BASE_PORT
SHIM_PORT=$((BASE_PORT + 10))
CTLD=http://127.0.0.1:$CTLD_PORT
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
		echo "live-slurm: kept $W" >&2
	elif [ -z "${WORKDIR:-}" ]; then
		rm -rf "$W"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

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
# bench/live-slurm.sh: a private cluster on 127.0.0.1 only
ClusterName=livebench
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$CTLD_PORT
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
EOF
}

start_slurm() {
	"$SLURM_PREFIX/sbin/slurmctld" -D -i -f "$CONF" >"$W/log/slurmctld.out" 2>&1 &
	CTLD_PID=$!
	PIDS="$PIDS $CTLD_PID"
	for n in n1 n2 n3 n4; do
		"$SLURM_PREFIX/sbin/slurmd" -D -N "$n" -f "$CONF" >"$W/log/slurmd.$n.out" 2>&1 &
		PIDS="$PIDS $!"
	done
	i=0
	until curl -sf -o /dev/null "$CTLD/metrics/scheduler"; do
		i=$((i + 1))
		[ $i -lt 60 ] || die "slurmctld's metrics do not answer on $CTLD (see $W/log/slurmctld.log)"
		kill -0 "$CTLD_PID" 2>/dev/null || die "slurmctld exited (see $W/log/slurmctld.log)"
		sleep 1
	done
	i=0
	while [ "$(slurm sinfo -h -o %D -t idle | awk '{ s += $1 } END { print s + 0 }')" -lt 4 ]; do
		i=$((i + 1))
		if [ $i -ge 30 ]; then
			echo "live-slurm: not every node is idle after 30 s (see $W/log/slurmd.*); measuring anyway" >&2
			break
		fi
		sleep 1
	done
}

REST_SOCK=$W/run/slurmrestd.sock
REST_PID=""
start_rest() {
	[ -x "$SLURM_PREFIX/sbin/slurmrestd" ] || return 0
	# rest_auth/local: the peer's uid, over a unix socket; it runs as SlurmUser here on purpose
	SLURM_CONF=$CONF SLURMRESTD_SECURITY=disable_user_check \
		"$SLURM_PREFIX/sbin/slurmrestd" -a rest_auth/local "unix:$REST_SOCK" >"$W/log/slurmrestd.out" 2>&1 &
	REST_PID=$!
	PIDS="$PIDS $REST_PID"
	i=0
	until [ -S "$REST_SOCK" ]; do
		i=$((i + 1))
		if [ $i -ge 20 ] || ! kill -0 "$REST_PID" 2>/dev/null; then
			echo "live-slurm: slurmrestd does not start (see $W/log/slurmrestd.out); no rest-jobs row" >&2
			REST_PID=""
			return 0
		fi
		sleep 0.5
	done
	REST_VERSION=$(curl -s --unix-socket "$REST_SOCK" http://localhost/openapi/v3 |
		grep -o '/slurm/v0\.0\.[0-9]*/' | sort -u | tail -n 1 | cut -d/ -f3)
	[ -n "$REST_VERSION" ] || REST_PID=""
}

slurm() {
	cmd=$1
	shift
	SLURM_CONF=$CONF "$SLURM_PREFIX/bin/$cmd" "$@"
}

# job records in slurmctld (a pending array is one record until its tasks start)
records() {
	slurm squeue -h -a --states=all -o %i | wc -l
}

# Submit held jobs until there are $1 records: accounts and partitions vary, so the per-user,
# per-account and per-partition sums have several series; 8 sbatch at a time.
fill_to() {
	have=$(records)
	[ "$have" -lt "$1" ] || return 0
	# shellcheck disable=SC2016 # the script is sh -c's, expanded there
	seq "$have" $(($1 - 1)) | SLURM_CONF=$CONF xargs -P 8 -I{} sh -c \
		'i={}; p=batch; [ $((i % 5)) -eq 0 ] && p=debug
		 exec "$0" --hold --parsable -p "$p" -A "acct$((i % 10))" -t 10 -o /dev/null -e /dev/null --wrap true' \
		"$SLURM_PREFIX/bin/sbatch" >/dev/null
}

# --- measuring --------------------------------------------------------------------------------
now() { date +%s.%N; }

# utime + stime of process $1, in milliseconds (fields 14 and 15 of /proc/PID/stat; the command
# name, field 2, may hold spaces, so count after its closing parenthesis)
cpu_ms() {
	sed 's/^.*) //' "/proc/$1/stat" | awk -v hz="$HZ" '{ printf "%.3f\n", ($12 + $13) * 1000 / hz }'
}

# slurmctld's CPU per second while idle, measured over the time a measurement takes
IDLE_RATE=0
measure_idle() {
	c0=$(cpu_ms "$CTLD_PID")
	t0=$(now)
	sleep "$(awk -v n="$SCRAPES" -v e="$SCRAPE_EVERY" 'BEGIN { print n * e }')"
	c1=$(cpu_ms "$CTLD_PID")
	t1=$(now)
	IDLE_RATE=$(awk -v a="$c0" -v b="$c1" -v s="$t0" -v e="$t1" 'BEGIN { printf "%.6f", (b - a) / (e - s) }')
}

# measure NAME COMMAND...: run COMMAND SCRAPES times, SCRAPE_EVERY s apart; print NAME and
# slurmctld's CPU per run less the idle rate (and slurmrestd's when it is running)
measure() {
	name=$1
	shift
	c0=$(cpu_ms "$CTLD_PID")
	r0=0
	[ -z "$REST_PID" ] || r0=$(cpu_ms "$REST_PID")
	t0=$(now)
	k=0
	while [ $k -lt "$SCRAPES" ]; do
		"$@" >/dev/null 2>&1 || echo "live-slurm: $name: a run failed" >&2
		k=$((k + 1))
		# the next run starts k * SCRAPE_EVERY after the first, however long this one took
		sleep "$(awk -v s="$t0" -v t="$(now)" -v k="$k" -v e="$SCRAPE_EVERY" \
			'BEGIN { d = s + k * e - t; printf "%.3f", (d > 0 ? d : 0) }')"
	done
	c1=$(cpu_ms "$CTLD_PID")
	r1=0
	[ -z "$REST_PID" ] || r1=$(cpu_ms "$REST_PID")
	t1=$(now)
	awk -v name="$name" -v a="$c0" -v b="$c1" -v s="$t0" -v e="$t1" -v idle="$IDLE_RATE" -v n="$SCRAPES" \
		-v ra="$r0" -v rb="$r1" -v rest="$REST_PID" 'BEGIN {
			v = (b - a - idle * (e - s)) / n
			if (v < 0) v = 0
			if (rest != "" && name ~ /^rest/)
				printf "  %-42s %9.1f   (+%.1f ms in slurmrestd)\n", name, v, (rb - ra) / n
			else
				printf "  %-42s %9.1f\n", name, v
		}'
}

old_exporter() {
	slurm sinfo -h "-o %C"
	slurm sinfo -h "-o %D,%T"
	slurm sinfo -h -N -O NodeList,AllocMem,Memory,CPUsState,StateLong
	slurm sinfo -h -o%R,%C
	slurm squeue -a -r -h -o%P --states=PENDING
	slurm squeue -a -r -h "-o %A,%T,%r" --states=all
	slurm squeue -a -r -h "-o %A|%a|%T|%C"
	slurm squeue -a -r -h "-o %A|%u|%T|%C"
	slurm sdiag
}

SHIM_PID=""
# start_shim FLAGS...: the shim against this slurmctld on SHIM_PORT
start_shim() {
	"$SHIM_BIN" --slurmctld.url "$CTLD" --mapping.file "$MAPPING" --web.listen-address "127.0.0.1:$SHIM_PORT" \
		--log.level warn "$@" >"$W/log/shim.out" 2>&1 &
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

scrape() { curl -sf -o /dev/null "http://127.0.0.1:$SHIM_PORT/metrics"; }

# --- run --------------------------------------------------------------------------------------
start_munge
write_conf
start_slurm
start_rest
echo "slurmctld CPU per scrape (ms; $SCRAPES scrapes ${SCRAPE_EVERY} s apart, idle CPU subtracted)"
echo "Slurm: $(slurm scontrol --version); shim: $("$SHIM_BIN" --version)"
echo "shim defaults at a P s scrape interval: time-scaled P/${SCRAPE_EVERY}x, the shim run with" \
	"--slurmctld.min-interval 5 and --slurmctld.jobs.min-interval 25 divided by that"
for n in $RECORDS; do
	fill_to "$n"
	echo
	echo "$(records) job records:"
	measure_idle
	measure "old exporter (4 sinfo, 4 squeue, sdiag)" old_exporter
	for p in $PROM_INTERVALS; do
		scale=$(awk -v p="$p" -v e="$SCRAPE_EVERY" 'BEGIN { print p / e }')
		start_shim --slurmctld.min-interval "$(awk -v s="$scale" 'BEGIN { print 5 / s }')" \
			--slurmctld.jobs.min-interval "$(awk -v s="$scale" 'BEGIN { print 25 / s }')"
		measure "shim, defaults, scraped every $p s" scrape
		stop_shim
	done
	start_shim --slurmctld.min-interval 0 --slurmctld.jobs.min-interval 0
	measure "shim, every interval 0" scrape
	stop_shim
	for ep in jobs partitions jobs-users-accts nodes scheduler; do
		measure "/metrics/$ep alone" curl -sf -o /dev/null "$CTLD/metrics/$ep"
	done
	if [ -n "$REST_PID" ]; then
		measure "rest /slurm/$REST_VERSION/jobs" curl -sf -o /dev/null --unix-socket "$REST_SOCK" \
			"http://localhost/slurm/$REST_VERSION/jobs"
	fi
done
