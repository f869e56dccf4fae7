#!/bin/sh
# shellcheck disable=SC2153 # CTLD_PID, REST_PID and SHIM_PID are set by live-lib.sh's functions
# tests/bench/live-rest-jobs.sh: the controller host's CPU per minute with --slurmrestd.url alone
# (the queue rows from /jobs/state) and with --slurmrestd.jobs, against
# the old exporter's, on a live cluster (the table in docs/performance.md, "Live: the job
# rows from slurmrestd, per minute").
#
# On a private cluster on 127.0.0.1 (tests/bench/live-lib.sh: its own munged, one slurmctld, four
# slurmd in multiple-slurmd mode, slurmrestd on a unix socket with rest_auth/local, run as REST_USER),
# for each RECORDS level (held jobs of several users, accounts and partitions, one sbatch per
# record, as tests/bench/live-slurm.sh fills the queue):
#   idle   nothing scrapes, IDLE_S seconds: slurmctld and slurmrestd alone
#   shim   for each of SHIM_MODES: "url", the shim with --slurmrestd.url unix:<socket> alone (the
#          eleven queue rows from /jobs/state, /jobs not fetched); "jobs", with --slurmrestd.jobs too;
#          every other flag at its default (SHIM_SET adds flags), scraped every EVERY s for SHIM_S
#          seconds
#   old    the old exporter 0.20 (OLD_EXPORTER: built as docs/performance.md says), with the Slurm
#          commands on its PATH, scraped the same way for OLD_S seconds
# Each minute's CPU time (ms) of slurmctld, slurmrestd and the shim (the shim's rows), or of
# slurmctld, the old exporter's children (sinfo, squeue, sdiag: the cutime + cstime of the exporter)
# and the exporter itself, from tests/bench/live_cpu.py's window mode; each scrape's duration and
# what the shim said about /jobs and /jobs/state (cost, interval, timeout, failures, age) and the age
# of each kind of row (slurm_queue_pending: /jobs/state; slurm_queue_pending_dependency: /jobs) after
# the table. Each row's header and end say the UTC time and the load average (/proc/loadavg).
# Scrapes are as Prometheus sends them (gzip accepted, a 10 s scrape timeout).
#
# Usage, as root (slurmrestd refuses root and runs as REST_USER; the jobs belong to FILL_USERS),
# from the repository root after make:
#   SLURM_PREFIX=/opt/slurm-25.11 OLD_EXPORTER=/path/to/prometheus-slurm-exporter \
#     tests/bench/live-rest-jobs.sh 2>&1 | tee live-rest-jobs.txt
# Environment:
#   SLURM_PREFIX   required: an installed Slurm 25.11 or 26.05 with slurmrestd (this script never builds one);
#                  or a prefix of symlinks to one whose sbin/slurmrestd is a script that execs the real one
#                  (exec keeps the PID measured), e.g. with LD_LIBRARY_PATH naming a patched libslurmfull.so
#   OLD_EXPORTER   the old exporter's binary (no "old" rows when unset)
#   RECORDS        job record levels, ascending (default "5000 20000")
#   EVERY          seconds between scrapes (default 30); IDLE_S, SHIM_S, OLD_S the rows' lengths in
#                  seconds, whole minutes (default 60, 300, 240)
#   SHIM_SET       more flags for the shim (e.g. "--slurmrestd.jobs.max-share 2")
#   SHIM_MODES     the shim rows, in order (default "url jobs")
#   ORDER          the rows in the order they run, each url, jobs or old, any of them repeated (default
#                  "$SHIM_MODES old"; e.g. "old url old url jobs old": the old exporter's windows
#                  alternate with the shim's, in the same conditions); JOBS_S the jobs rows' length
#                  (default SHIM_S; a full /jobs period is 100 times a fetch's duration at the default
#                  --slurmrestd.jobs.max-share 1: 10 to 40 min at 5,000 jobs, 80 at 20,000 on a loaded
#                  2-CPU host); url+FLAGS:
#                  --slurmrestd.url with FLAGS, "+" between words (url+--slurmrestd.min-interval+55)
#   WORKDIR, KEEP=1: keep the cluster's state; run again with the same WORKDIR and BASE_PORT, slurmctld
#                  recovers the queue from it and fill_to submits nothing more
#   BASE_PORT      slurmctld's port; slurmd use the next four, the shim BASE_PORT+10, the old
#                  exporter BASE_PORT+12 (default 8817)
#   REST_USER, FILL_USERS, MUNGED, SHIM_BIN, MAPPING, WORKDIR, KEEP: as tests/bench/live-slurm.sh
# The jobs are held, one sbatch per record, owned by FILL_USERS (tests/bench/live-lib.sh's fill_to).
# Every process it started is stopped at exit, by its PID.
set -eu

SLURM_PREFIX=${SLURM_PREFIX:-}
OLD_EXPORTER=${OLD_EXPORTER:-}
SHIM_BIN=${SHIM_BIN:-./slurm-exporter-shim}
MAPPING=${MAPPING:-mappings/prometheus-slurm-exporter.json}
RECORDS=${RECORDS:-5000 20000}
EVERY=${EVERY:-30}
IDLE_S=${IDLE_S:-60}
SHIM_S=${SHIM_S:-300}
OLD_S=${OLD_S:-240}
SHIM_SET=${SHIM_SET:-}
SHIM_MODES=${SHIM_MODES:-url jobs}
ORDER=${ORDER:-$SHIM_MODES old}
JOBS_S=${JOBS_S:-$SHIM_S}
BASE_PORT=${BASE_PORT:-8817}
REST_USER=${REST_USER:-daemon}
KEEP=${KEEP:-0}
LIVE_NAME=live-rest-jobs
# shellcheck source=tests/bench/live-lib.sh
. "$(dirname "$0")/live-lib.sh"

[ "$(id -u)" = 0 ] || die "run as root: slurmrestd runs as REST_USER, the jobs as FILL_USERS"
[ -n "$SLURM_PREFIX" ] || die "set SLURM_PREFIX to an installed Slurm 25.11 or 26.05 (this script does not build one)"
for b in sbin/slurmctld sbin/slurmd sbin/slurmrestd bin/sbatch bin/squeue bin/sinfo bin/sdiag bin/scontrol; do
	[ -x "$SLURM_PREFIX/$b" ] || die "$SLURM_PREFIX/$b not found"
done
MUNGED=${MUNGED:-$(command -v munged || echo /usr/sbin/munged)}
[ -x "$MUNGED" ] || die "munged not found (set MUNGED)"
[ -x "$SHIM_BIN" ] || die "$SHIM_BIN not found (run make first)"
[ -r "$MAPPING" ] || die "$MAPPING not found (run from the repository root)"
[ -z "$OLD_EXPORTER" ] || [ -x "$OLD_EXPORTER" ] || die "$OLD_EXPORTER is not executable"
MAPPING=$(cd "$(dirname "$MAPPING")" && pwd)/$(basename "$MAPPING")
LIVE_CPU="python3 $(cd "$(dirname "$0")" && pwd)/live_cpu.py"

live_setup
CTLD=http://127.0.0.1:$BASE_PORT
SHIM_PORT=$((BASE_PORT + 10))
OLD_PORT=$((BASE_PORT + 12))

# when: the UTC time and the load average, for a row's header and end
when() {
	echo "$(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg)"
}

OLD_PID=""
start_old() {
	env PATH="$SLURM_PREFIX/bin:/usr/bin:/bin" SLURM_CONF="$CONF" "$OLD_EXPORTER" -listen-address "127.0.0.1:$OLD_PORT" \
		>>"$W/log/old-exporter.out" 2>&1 &
	OLD_PID=$!
	PIDS="$PIDS $OLD_PID"
	i=0
	until curl -s -o /dev/null "http://127.0.0.1:$OLD_PORT/"; do
		i=$((i + 1))
		[ $i -lt 50 ] || die "the old exporter does not start (see $W/log/old-exporter.out)"
		sleep 0.1
	done
}

# --- the cluster --------------------------------------------------------------------------------
start_munge
write_conf
chmod 755 "$W" "$W/munge"
chmod 644 "$CONF"
start_ctld slurmctld "$CONF"
start_slurmds
wait_metrics "$CTLD" "$CTLD_PID"
wait_idle
start_rest "unix:$REST_SOCK" rest_auth/local
[ -n "$REST_PID" ] || die "slurmrestd does not start (see $W/log/slurmrestd.out)"
rest_version --max-time 30
[ -n "$REST_VERSION" ] || die "slurmrestd names no /slurm/ version in /openapi/v3"

echo "$LIVE_NAME: $("$SLURM_PREFIX/sbin/slurmctld" -V), slurmrestd $REST_VERSION, $(nproc) CPUs, $(uname -r)"
[ -z "${SLURM_SRC:-}" ] || echo "$LIVE_NAME: Slurm source $(git -C "$SLURM_SRC" rev-parse HEAD 2>/dev/null || echo '?')"
echo "$LIVE_NAME: shim $("$SHIM_BIN" --version 2>&1 | head -n 1); scrapes every $EVERY s"
for n in $RECORDS; do
	fill_to "$n"
	LEVEL=$(records)
	echo
	echo "== $LEVEL job records"
	for d in jobs jobs/state nodes; do
		# shellcheck disable=SC2086 # REST_CURL is words
		echo "  slurmrestd /$d: $(curl -s --max-time 120 -o /dev/null -w '%{size_download} bytes in %{time_total} s' $REST_CURL/slurm/$REST_VERSION/$d)"
	done
	echo
	echo "idle (nothing scrapes), ${IDLE_S} s ($(when)):"
	$LIVE_CPU window "$IDLE_S" 0 none "slurmctld=$CTLD_PID" "slurmrestd=$REST_PID" | grep -v '# scrape'
	echo "  ended $(when)"
	echo
	for mode in $ORDER; do
		case $mode in
		url) mflags= window=$SHIM_S ;;
		url+*) mflags=$(echo "${mode#url+}" | tr '+' ' ') window=$SHIM_S ;;
		jobs) mflags=--slurmrestd.jobs window=$JOBS_S ;;
		old)
			[ -n "$OLD_EXPORTER" ] || continue
			echo
			echo "old exporter 0.20, ${OLD_S} s ($(when)):"
			start_old
			$LIVE_CPU window "$OLD_S" "$EVERY" "http://127.0.0.1:$OLD_PORT/metrics" "slurmctld=$CTLD_PID" \
				"slurmrestd=$REST_PID" "CLI children=$OLD_PID:children" "old exporter=$OLD_PID" | grep -v '# scrape'
			echo "  ended $(when)"
			kill "$OLD_PID" 2>/dev/null || true
			wait "$OLD_PID" 2>/dev/null || true
			continue
			;;
		*) die "ORDER: $mode is neither url, jobs nor old" ;;
		esac
		echo
		echo "shim --slurmrestd.url${mflags:+ $mflags} ${SHIM_SET:+$SHIM_SET }(defaults otherwise), ${window} s ($(when)):"
		# shellcheck disable=SC2086 # SHIM_SET and mflags are words
		start_shim "$CTLD" --slurmrestd.url "unix:$REST_SOCK" $mflags $SHIM_SET
		$LIVE_CPU window "$window" "$EVERY" "http://127.0.0.1:$SHIM_PORT/metrics" "slurmctld=$CTLD_PID" \
			"slurmrestd=$REST_PID" "shim=$SHIM_PID"
		echo "  ended $(when)"
		curl -s "http://127.0.0.1:$SHIM_PORT/" | sed -n 's/<[^>]*>//g; /slurmrestd-jobs/p'
		stop_shim
		echo "  shim log:"
		sed 's/^/    /' "$W/log/shim.out"
		: >"$W/log/shim.out"
	done
done
