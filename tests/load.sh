#!/bin/sh
# tests/load.sh: bounded load test of the shim on loopback with wrk, against tests/fake_slurmctld
# serving tests/fixtures/slurm-25.11/04-resumed-busy. Not run by `make test` (see tests/test_load.sh
# for the short variant); figures are recorded in docs/reliability.md.
#
#   SHIM_BIN=build-rel/slurm-exporter-shim FAKE_SLURMCTLD=build-rel/tests/fake_slurmctld sh tests/load.sh
#
# Phase 1, raised limits: CONNECTIONS (200) keep-alive connections for LOAD_SECONDS (60) with
#   --web.max-connections MAX_CONNECTIONS (512). The per-IP limit is half of it (256), so all 200 of
#   wrk's connections (one source IP) are admitted; with the default 64 (32 per IP) 168 of them would
#   be refused, which is phase 2. Asserts:
#     - zero failed requests: no Non-2xx/3xx answer and no socket error (connect/read/write/timeout);
#     - flat memory: VmRSS after - VmRSS before < RSS_BOUND_KB (20 MiB), "before" taken after a
#       WARMUP_SECONDS warm-up run of the same load (it sizes malloc arenas and thread stacks), "after"
#       once the connection threads are gone;
#     - one upstream fetch per endpoint per window: with --slurmctld.min-interval MIN_INTERVAL (W) the
#       fake's /_stats counts, per endpoint, at most floor(elapsed/W) + 1 fetches during the run
#       (and at least floor(elapsed/W) - 1: answers are refreshed, never served stale);
#     - the shim still answers 200 afterwards, and never ran more than MAX_CONNECTIONS + 2 threads
#       (+ 5: a fetch runs on a worker thread, at most one fetch per endpoint at a time).
# Phase 2, default limits (REFUSAL_SECONDS, 10; 0 skips it): the same CONNECTIONS against the default
#   --web.max-connections 64 (32 per IP). Connections over the limit are accepted and closed at once
#   by libmicrohttpd, which wrk counts as socket (read) errors. Asserts: refusals happen when
#   CONNECTIONS > 32, every admitted request still gets 200 (no Non-2xx), the threads stay <= 71,
#   RSS growth < RSS_BOUND_KB, and the shim answers 200 again within 5 s after the burst.
#
# After each phase the shim must exit 0 on SIGTERM with no sanitizer report in its log. With a
# sanitizer build (make asan) the RSS bounds are reported, not asserted (ASan's quarantine).
# Every process is on 127.0.0.1 and killed on exit. Prints "figures: ..." lines and, last,
# "N passed, M failed"; exits non-zero on failure.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh

SHIM_BIN=${SHIM_BIN:-./slurm-exporter-shim}
FAKE_SLURMCTLD=${FAKE_SLURMCTLD:-build/tests/fake_slurmctld}
LOAD_SECONDS=${LOAD_SECONDS:-60}
CONNECTIONS=${CONNECTIONS:-200}
THREADS=${THREADS:-2}
MAX_CONNECTIONS=${MAX_CONNECTIONS:-512}
MIN_INTERVAL=${MIN_INTERVAL:-5}
WARMUP_SECONDS=${WARMUP_SECONDS:-3}
RSS_BOUND_KB=${RSS_BOUND_KB:-20480}
REFUSAL_SECONDS=${REFUSAL_SECONDS:-10}
STATE=${STATE:-tests/fixtures/slurm-25.11/04-resumed-busy}
MAPPING=mappings/prometheus-slurm-exporter.json
ENDPOINTS="nodes partitions scheduler jobs-users-accts" # /metrics/jobs: not read by the shipped table, never fetched

TMP=$(mktemp -d /tmp/shim-load.XXXXXX) || exit 1
PASS=0
FAIL=0
FAKE_PID=
SHIM_PID=
SAMPLER_PID=
WRK_PID=

cleanup() {
	killwait "$WRK_PID" "$SAMPLER_PID" "$SHIM_PID" "$FAKE_PID"
	WRK_PID= SAMPLER_PID= SHIM_PID= FAKE_PID=
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM


for tool in wrk curl; do
	if ! command -v $tool >/dev/null 2>&1; then
		echo "$tool is not installed (apt-get install $tool)"
		FAIL=1
		finish
	fi
done
for f in "$SHIM_BIN" "$FAKE_SLURMCTLD"; do
	if [ ! -x "$f" ]; then
		echo "$f is not executable (set SHIM_BIN / FAKE_SLURMCTLD)"
		FAIL=1
		finish
	fi
done

now() { date +%s.%N; }
status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status" 2>/dev/null; } # status_kb PID VmRSS
threads() { awk '$1 == "Threads:" { print $2 }' "/proc/$1/status" 2>/dev/null; }

# start_shim EXTRA-FLAGS...: on a free random port (retried); sets SHIM_PID, PORT, URL.
start_shim() {
	start_shim_with 50 "$@" || { cat "$TMP/shim.log"; return 1; }
}

stop_shim() { killwait "$SHIM_PID"; SHIM_PID=; }
# stop_checked LABEL: SIGTERM the shim; it must exit 0, with no sanitizer report in its log
stop_checked() {
	kill "$SHIM_PID" 2>/dev/null
	wait "$SHIM_PID"
	src=$?
	SHIM_PID=
	SAN=$(grep -cE 'AddressSanitizer|LeakSanitizer|runtime error:' "$TMP/shim.log")
	check "$1: the shim exits 0 after SIGTERM (exit $src), no sanitizer report ($SAN lines)" \
		eval '[ "$src" -eq 0 ] && [ "$SAN" -eq 0 ]'
	[ "$SAN" -eq 0 ] || grep -E -A20 'AddressSanitizer|LeakSanitizer|runtime error:' "$TMP/shim.log" | head -40
}
# A sanitizer build (make asan) keeps freed memory in ASan's quarantine (up to 256 MB): its RSS says
# nothing about leaks, so the RSS bounds are reported, not asserted, and LeakSanitizer's exit status
# (checked by stop_checked) stands in for them.
if grep -qa __asan_init "$SHIM_BIN"; then ASAN=1; else ASAN=0; fi
rss_check() { # rss_check NAME GROWTH
	if [ "$ASAN" -eq 1 ]; then
		echo "skip $1 (sanitizer build: RSS not asserted)"
	else
		check "$1" [ "$2" -lt "$RSS_BOUND_KB" ]
	fi
}

# Wait until the connection threads are gone (libmicrohttpd: 1 main + 1 listen thread).
drain() {
	i=0
	while [ "$(threads "$SHIM_PID")" -gt 2 ] 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	sleep 0.5
}

stat_of() { awk -v k="$2" '$1 == k { print $2 }' "$1"; } # stat_of FILE ENDPOINT
fake_stats() { curl -sS --max-time 5 "http://127.0.0.1:$FAKE_PORT/_stats" >"$1"; }

# Max of Threads and VmRSS every 0.2 s while the shim runs, into $TMP/peak (threads rss).
start_sampler() {
	(
		mt=0 mr=0
		while kill -0 "$SHIM_PID" 2>/dev/null; do
			t=$(threads "$SHIM_PID")
			r=$(status_kb "$SHIM_PID" VmRSS)
			[ -n "$t" ] && [ "$t" -gt "$mt" ] && mt=$t
			[ -n "$r" ] && [ "$r" -gt "$mr" ] && mr=$r
			echo "$mt $mr" >"$TMP/peak.tmp" && mv "$TMP/peak.tmp" "$TMP/peak"
			sleep 0.2
		done
	) &
	SAMPLER_PID=$!
}
stop_sampler() { killwait "$SAMPLER_PID"; SAMPLER_PID=; }

# run_wrk SECONDS OUT: bounded wrk run (killed after SECONDS + 30 at the latest).
run_wrk() {
	timeout $(($1 + 30)) wrk -t"$THREADS" -c"$CONNECTIONS" -d"$1"s --timeout 10s --latency "$URL" >"$2" 2>&1 &
	WRK_PID=$!
	wait "$WRK_PID"
	WRK_RC=$?
	WRK_PID=
}

# Figures from wrk's report.
parse_wrk() {
	REQS=$(awk '/ requests in / { print $1 }' "$1")
	RPS=$(awk '/^Requests\/sec:/ { print $2 }' "$1")
	P50=$(awk '$1 == "50%" { print $2 }' "$1")
	P99=$(awk '$1 == "99%" { print $2 }' "$1")
	LMAX=$(awk '$1 == "Latency" && NF >= 4 { print $4; exit }' "$1")
	NON2XX=$(awk -F': *' '/Non-2xx or 3xx responses/ { print $2 }' "$1")
	NON2XX=${NON2XX:-0}
	# "Socket errors: connect 0, read 12, write 0, timeout 0" (absent when all are 0)
	set -- $(sed -n 's/.*Socket errors: connect \([0-9]*\), read \([0-9]*\), write \([0-9]*\), timeout \([0-9]*\).*/\1 \2 \3 \4/p' "$1")
	SE_CONNECT=${1:-0} SE_READ=${2:-0} SE_WRITE=${3:-0} SE_TIMEOUT=${4:-0}
	SOCKERR=$((SE_CONNECT + SE_READ + SE_WRITE + SE_TIMEOUT))
}

answers_200() { # the shim answers 200 within 5 s
	i=0
	while [ $i -lt 25 ]; do
		[ "$(curl -s -o /dev/null --max-time 5 -w '%{http_code}' "$URL")" = 200 ] && return 0
		sleep 0.2
		i=$((i + 1))
	done
	return 1
}

echo "load: $CONNECTIONS connections, $THREADS wrk threads, ${LOAD_SECONDS}s (warm-up ${WARMUP_SECONDS}s)," \
	"--web.max-connections $MAX_CONNECTIONS, --slurmctld.min-interval $MIN_INTERVAL, $STATE"
if ! start_fake; then
	echo "cannot start $FAKE_SLURMCTLD"
	cat "$TMP/fake.log"
	FAIL=1
	finish
fi

# ---------------------------------------------------------------- phase 1: raised limits
if [ $((MAX_CONNECTIONS / 2)) -lt "$CONNECTIONS" ]; then
	echo "note: per-IP limit $((MAX_CONNECTIONS / 2)) < $CONNECTIONS connections: expect refusals in phase 1"
fi
if start_shim --web.max-connections "$MAX_CONNECTIONS"; then
	RSS_START=$(status_kb "$SHIM_PID" VmRSS)
	if [ "$WARMUP_SECONDS" -gt 0 ]; then
		run_wrk "$WARMUP_SECONDS" "$TMP/warmup.txt"
		drain
	fi
	RSS_BEFORE=$(status_kb "$SHIM_PID" VmRSS)
	fake_stats "$TMP/stats.before"
	start_sampler
	T0=$(now)
	run_wrk "$LOAD_SECONDS" "$TMP/wrk.txt"
	T1=$(now)
	stop_sampler
	drain
	RSS_AFTER=$(status_kb "$SHIM_PID" VmRSS)
	fake_stats "$TMP/stats.after"
	read -r PEAK_THREADS PEAK_RSS <"$TMP/peak" 2>/dev/null || { PEAK_THREADS=0; PEAK_RSS=0; }
	parse_wrk "$TMP/wrk.txt"
	ELAPSED=$(awk -v a="$T0" -v b="$T1" 'BEGIN { printf "%.2f", b - a }')
	WINDOWS=$(awk -v e="$ELAPSED" -v w="$MIN_INTERVAL" 'BEGIN { print (w > 0 ? int(e / w) : 1000000000) }')
	cat "$TMP/wrk.txt"

	check "phase 1: wrk ran (exit $WRK_RC, $REQS requests)" eval '[ "$WRK_RC" -eq 0 ] && [ "${REQS:-0}" -gt 0 ]'
	check "phase 1: no Non-2xx/3xx answers ($NON2XX)" [ "$NON2XX" -eq 0 ]
	check "phase 1: no socket errors (connect $SE_CONNECT, read $SE_READ, write $SE_WRITE, timeout $SE_TIMEOUT)" \
		[ "$SOCKERR" -eq 0 ]
	GROWTH=$((RSS_AFTER - RSS_BEFORE))
	rss_check "phase 1: flat RSS: ${RSS_BEFORE} kB -> ${RSS_AFTER} kB (growth ${GROWTH} kB < ${RSS_BOUND_KB} kB)" "$GROWTH"
	check "phase 1: threads bounded (peak $PEAK_THREADS <= $((MAX_CONNECTIONS + 2 + 5)))" \
		[ "$PEAK_THREADS" -le $((MAX_CONNECTIONS + 2 + 5)) ]
	FETCHES=
	for ep in $ENDPOINTS; do
		n=$(($(stat_of "$TMP/stats.after" "$ep") - $(stat_of "$TMP/stats.before" "$ep")))
		FETCHES="$FETCHES $ep=$n"
		lo=$((WINDOWS - 1))
		[ $lo -lt 1 ] && lo=1
		check "phase 1: /metrics/$ep fetched $n times in ${ELAPSED}s (window ${MIN_INTERVAL}s: $lo..$((WINDOWS + 1)))" \
			eval '[ "$n" -ge "$lo" ] && [ "$n" -le $((WINDOWS + 1)) ]'
	done
	check "phase 1: the shim answers 200 afterwards" answers_200
	echo "figures: phase=raised connections=$CONNECTIONS seconds=$LOAD_SECONDS elapsed=$ELAPSED" \
		"max_connections=$MAX_CONNECTIONS min_interval=$MIN_INTERVAL requests=$REQS rps=$RPS p50=$P50 p99=$P99" \
		"max=$LMAX non2xx=$NON2XX socket_errors=$SOCKERR rss_start_kb=$RSS_START rss_before_kb=$RSS_BEFORE" \
		"rss_after_kb=$RSS_AFTER rss_peak_kb=$PEAK_RSS peak_threads=$PEAK_THREADS fetches:$FETCHES"
	stop_checked "phase 1"
else
	bad "phase 1: start the shim"
fi

# ---------------------------------------------------------------- phase 2: default limits
if [ "$REFUSAL_SECONDS" -gt 0 ]; then
	if start_shim; then
		answers_200 >/dev/null
		RSS_BEFORE=$(status_kb "$SHIM_PID" VmRSS)
		start_sampler
		run_wrk "$REFUSAL_SECONDS" "$TMP/wrk2.txt"
		stop_sampler
		drain
		RSS_AFTER=$(status_kb "$SHIM_PID" VmRSS)
		read -r PEAK_THREADS PEAK_RSS <"$TMP/peak" 2>/dev/null || { PEAK_THREADS=0; PEAK_RSS=0; }
		parse_wrk "$TMP/wrk2.txt"
		cat "$TMP/wrk2.txt"
		check "phase 2: wrk ran (exit $WRK_RC, $REQS requests answered)" eval '[ "$WRK_RC" -eq 0 ] && [ "${REQS:-0}" -gt 0 ]'
		if [ "$CONNECTIONS" -gt 32 ]; then
			check "phase 2: connections over the per-IP limit 32 are refused (socket errors: connect $SE_CONNECT, read $SE_READ, write $SE_WRITE, timeout $SE_TIMEOUT)" \
				eval '[ "$SOCKERR" -gt 0 ] && [ "$SE_TIMEOUT" -eq 0 ]'
		fi
		check "phase 2: every admitted request got 200 (Non-2xx $NON2XX)" [ "$NON2XX" -eq 0 ]
		check "phase 2: threads bounded by the default limit (peak $PEAK_THREADS <= 71)" [ "$PEAK_THREADS" -le 71 ]
		GROWTH=$((RSS_AFTER - RSS_BEFORE))
		rss_check "phase 2: RSS ${RSS_BEFORE} kB -> ${RSS_AFTER} kB (growth ${GROWTH} kB < ${RSS_BOUND_KB} kB)" "$GROWTH"
		check "phase 2: the shim answers 200 again after the burst" answers_200
		echo "figures: phase=default-limits connections=$CONNECTIONS seconds=$REFUSAL_SECONDS requests=$REQS rps=$RPS" \
			"p50=$P50 p99=$P99 max=$LMAX non2xx=$NON2XX refused(socket errors)=$SOCKERR read=$SE_READ" \
			"connect=$SE_CONNECT rss_before_kb=$RSS_BEFORE rss_after_kb=$RSS_AFTER rss_peak_kb=$PEAK_RSS" \
			"peak_threads=$PEAK_THREADS"
		stop_checked "phase 2"
	else
		bad "phase 2: start the shim"
	fi
fi

finish
