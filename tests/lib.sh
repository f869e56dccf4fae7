# tests/lib.sh: helpers shared by the shell tests (sourced, not run): the load and soak tests, the
# status page's, the checkers' (test_layers.sh, test_source_shape.sh) and the tests of the daemon
# against fake_slurmctld (fake_test sets them up).
# The caller sets PASS=0 FAIL=0 before using ok/bad/check/finish, and TMP, STATE, MAPPING,
# MIN_INTERVAL, SHIM_BIN, FAKE_SLURMCTLD before starting processes (or calls fake_test).

# killwait PID...: SIGTERM and reap each (empty arguments are skipped)
killwait() {
	for p in "$@"; do
		[ -n "$p" ] || continue
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
}

ok() { PASS=$((PASS + 1)); echo "ok   $1"; }
bad() { FAIL=$((FAIL + 1)); echo "FAIL $1"; }
# check NAME COMMAND...: ok if the command succeeds
check() { name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }
# finish: the closing "N passed, M failed" line, and the exit status
finish() { echo "$PASS passed, $FAIL failed"; [ "$FAIL" -eq 0 ]; exit $?; }
# refused NAME WORDS COMMAND...: ok if the command fails saying WORDS (a grep pattern), its output
# shown otherwise. For the tests of a checker, which must refuse what breaks its rule ($TMP/out).
refused() {
	name=$1 words=$2
	shift 2
	if "$@" >"$TMP/out" 2>&1; then
		bad "$name: accepted"
		sed 's/^/    /' "$TMP/out"
	elif grep -q -- "$words" "$TMP/out"; then
		ok "$name: $(grep -- "$words" "$TMP/out" | head -1)"
	else
		bad "$name: refused without \"$words\""
		sed 's/^/    /' "$TMP/out"
	fi
}

# a random port from 20000 up to the kernel's ephemeral range (outgoing connections, e.g. every
# curl of the suite, take their local ports from that range, so a port drawn there may be in use);
# callers retry when it is taken
rand_port() {
	lo=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
	[ "${lo:-0}" -gt 21000 ] 2>/dev/null || lo=32768
	echo $((20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % (lo - 20000)))
}

# fake_test NAME [SRC]: the start of a test of the daemon against fake_slurmctld, run from the
# repository root after `. tests/lib.sh`: PASS=0 FAIL=0; SHIM_BIN and FAKE_SLURMCTLD from the
# environment, else the build's; MAPPING the legacy table and MIN_INTERVAL 0 (the caller may set
# them after); TMP a new directory ${TMPDIR:-/tmp}/shim-test-NAME.XXXXXX; FAKE_PID, SHIM_PID and
# MORE_PIDS empty. On exit the shim, the fake and the processes in MORE_PIDS (the caller's other
# fakes) are ended and TMP removed; INT and TERM exit 130 (through it). With SRC, a capture
# directory: STATE is a copy of its answers in $TMP/state, which the test may change, and
# $TMP/legacy holds the old exporter's eleven queue families in SRC (queue_equal's). Exits 1 if it
# cannot.
fake_test() {
	PASS=0 FAIL=0
	SHIM_BIN=${SHIM_BIN:-./slurm-exporter-shim}
	FAKE_SLURMCTLD=${FAKE_SLURMCTLD:-build/tests/fake_slurmctld}
	MAPPING=mappings/prometheus-slurm-exporter.json
	MIN_INTERVAL=0
	FAKE_PID='' SHIM_PID='' MORE_PIDS=''
	TMP=$(mktemp -d "${TMPDIR:-/tmp}/shim-test-$1.XXXXXX") || exit 1
	trap fake_test_cleanup EXIT
	trap 'exit 130' INT TERM
	[ $# -ge 2 ] || return 0
	SRC=$2 STATE=$TMP/state
	mkdir "$STATE" && cp "$SRC"/*.txt "$SRC"/*.json "$STATE"/ || exit 1
	grep -E '^slurm_queue_[a-z_]+ ' "$SRC/legacy_exporter_metrics.txt" | grep -v pending_dependency | sort >"$TMP/legacy"
}
fake_test_cleanup() {
	# shellcheck disable=SC2086 # MORE_PIDS is a list of PIDs
	killwait "$SHIM_PID" "$FAKE_PID" $MORE_PIDS
	rm -rf "$TMP"
}
# queue_equal [FILE]: the eleven queue families in FILE (default $TMP/m, the last scrape) are the old
# exporter's ($TMP/legacy, by fake_test), line for line (pending_dependency aside: it needs /jobs)
queue_equal() { grep -E '^slurm_queue_[a-z_]+ ' "${1:-$TMP/m}" | grep -v pending_dependency | sort | cmp -s - "$TMP/legacy"; }
# stat_of NAME: how many requests the fake has counted for NAME (an endpoint of its /_stats)
stat_of() { curl -s "http://127.0.0.1:$FAKE_PORT/_stats" | awk -v n="$1" '$1 == n { print $2 }'; }

# start_fake [FLAGS...]: fake_slurmctld serving $STATE on a port it picks, with FLAGS (its faults);
# sets FAKE_PID, FAKE_PORT.
start_fake() {
	rm -f "$TMP/fake.port"
	"$FAKE_SLURMCTLD" --port 0 --port-file "$TMP/fake.port" --dir "$STATE" "$@" 2>"$TMP/fake.log" &
	FAKE_PID=$!
	i=0
	while [ ! -s "$TMP/fake.port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	FAKE_PORT=$(cat "$TMP/fake.port" 2>/dev/null)
	[ -n "$FAKE_PORT" ]
}

# start_shim_with WAIT_TENTHS FLAGS...: the shim against the fake on a free random port, retried
# when the port is taken, waiting up to WAIT_TENTHS tenths of a second for "listening on"; run
# under $SHIM_WRAP when set (a command line split into words, e.g. valgrind and its options, so no
# spaces inside an option). With BIND_SCHEMA set, a second listener on 127.0.0.1:PORT2 bound to that
# schema, PORT2 drawn anew on every try like PORT. Sets SHIM_PID, PORT, PORT2, URL.
start_shim_with() {
	wait_tenths=$1
	shift
	for _try in 1 2 3 4 5 6 7 8; do
		PORT=$(rand_port)
		PORT2=
		[ -z "${BIND_SCHEMA:-}" ] || PORT2=$(rand_port)
		: >"$TMP/shim.log"
		# shellcheck disable=SC2086 # SHIM_WRAP is a word list on purpose
		${SHIM_WRAP:-} "$SHIM_BIN" --slurmctld.url "http://127.0.0.1:$FAKE_PORT" --mapping.file "$MAPPING" \
			--web.listen-address "127.0.0.1:$PORT" --slurmctld.min-interval "$MIN_INTERVAL" \
			--slurmctld.jobs.min-interval "$MIN_INTERVAL" "$@" \
			${PORT2:+--web.listen-address} ${PORT2:+"127.0.0.1:$PORT2=$BIND_SCHEMA"} \
			>/dev/null 2>"$TMP/shim.log" &
		SHIM_PID=$!
		i=0
		while [ $i -lt "$wait_tenths" ]; do
			if grep -q 'listening on' "$TMP/shim.log"; then
				URL="http://127.0.0.1:$PORT/metrics"
				return 0
			fi
			kill -0 "$SHIM_PID" 2>/dev/null || break
			sleep 0.1
			i=$((i + 1))
		done
		killwait "$SHIM_PID"
		SHIM_PID=
		grep -q 'cannot listen' "$TMP/shim.log" || break
	done
	return 1
}

# trend_growth K SAMPLES...: a memory series' growth that an oscillation of period up to K samples
# cannot fake: the minimum of the last K samples less the minimum of the first K (negative if it
# fell), K cut to half the samples so that the two windows never overlap; "unknown" if a sample is
# not a number or there are fewer than 2. The soak tests alternate new-connection and keep-alive
# batches, and a sample alternates with them: with K = 2 each window holds one low of the swing, and a
# steady leak of G per batch shows as G * (N - 2) of the G * (N - 1) that the largest growth over the
# first sample showed (8 of 9 batches with the soak's 10 samples; with 3 samples K is 1: the last
# sample less the first).
trend_growth() {
	k=$1
	shift
	[ $# -ge 2 ] || { echo unknown; return; }
	[ "$k" -le $(($# / 2)) ] || k=$(($# / 2))
	for v in "$@"; do case "$v" in '' | *[!0-9]*) echo unknown; return ;; esac; done
	i=0 early='' late=''
	for v in "$@"; do
		i=$((i + 1))
		if [ $i -le "$k" ] && { [ -z "$early" ] || [ "$v" -lt "$early" ]; }; then early=$v; fi
		if [ $i -gt $(($# - k)) ] && { [ -z "$late" ] || [ "$v" -lt "$late" ]; }; then late=$v; fi
	done
	echo $((late - early))
}
