#!/bin/sh
# The files an admin names, as the binary opens them (src/file_read.c): the mapping file (at start,
# with --check-mapping, and on SIGHUP), --web.config.file, --probe.targets-file and the token files
# are each refused when they are a FIFO, a directory or over their size bound, with the file's name
# and the reason, and nothing hangs: every command runs under timeout(1), so a blocking open fails
# the test instead of wedging it. The daemon with a FIFO as its token file still answers (the
# endpoints down, the file and the reason named on /metrics' 503 and the status page) and stops on
# SIGTERM; a mapping swapped for a FIFO and a SIGHUP keep the running table; a token over 64 KiB is
# refused whole (never cut), as is one with a control byte.
# Env: SHIM_BIN, FAKE_SLURMCTLD. Run from the repository root. Needs curl.
cd "$(dirname "$0")/.." || exit 1
BIN=${SHIM_BIN:-./slurm-exporter-shim}
FAKE=${FAKE_SLURMCTLD:-build/tests/fake_slurmctld}
MAP=mappings/prometheus-slurm-exporter.json
STATE=tests/fixtures/slurm-25.11/04-resumed-busy
T=$(mktemp -d /tmp/shim-test-files.XXXXXX) || exit 1
FAKE_PID=
SHIM_PID=
cleanup() {
	for p in $SHIM_PID $FAKE_PID; do
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
# check "description" expected-exit command...  (stdout+stderr in $T/out; 20 s at most)
check() {
	what=$1 want=$2
	shift 2
	timeout -s KILL 20 "$@" >"$T/out" 2>&1
	got=$?
	if [ "$got" -eq "$want" ]; then ok; else bad "$what: exit $got, want $want (137: it hung)"; sed 's/^/    /' "$T/out" | head -5; fi
}
has() { if grep -qF -- "$2" "$3"; then ok; else bad "$1: lacks: $2"; sed 's/^/    /' "$3" | head -5; fi; }

mkfifo "$T/fifo"
mkdir "$T/dir"
# sparse files one byte over each bound: the mapping (4 MiB), the web config and targets file (1 MiB)
truncate -s $((4 * 1024 * 1024 + 1)) "$T/big-mapping.json"
truncate -s $((1024 * 1024 + 1)) "$T/big.yml"

# --- at start: each file as a FIFO, a directory, too big -----------------------------------------
for f in fifo dir big-mapping.json; do
	case $f in
	fifo) why="is a FIFO, not a regular file" ;;
	dir) why="is a directory" ;;
	*) why="is over 4194304 bytes" ;;
	esac
	check "--check-mapping $f" 1 "$BIN" --check-mapping "$T/$f"
	has "--check-mapping $f" "$T/$f:1:1: cannot read mapping file: $why" "$T/out"
	check "--mapping.file $f" 1 "$BIN" --once --replay-dir "$STATE" --mapping.file "$T/$f"
	has "--mapping.file $f" "mapping: $T/$f:1:1: cannot read mapping file: $why" "$T/out"
done
for f in fifo dir big.yml; do
	case $f in
	fifo) why="is a FIFO, not a regular file" ;;
	dir) why="is a directory" ;;
	*) why="is over 1048576 bytes" ;;
	esac
	check "--web.config.file $f" 1 "$BIN" --replay-dir "$STATE" --mapping.file "$MAP" --web.listen-address 127.0.0.1:0 \
		--web.config.file "$T/$f"
	has "--web.config.file $f" "invalid web config: $T/$f: cannot read web config: $why" "$T/out"
	check "--probe.targets-file $f" 2 "$BIN" --once --replay-dir "$STATE" --mapping.file "$MAP" --probe.targets-file "$T/$f"
	has "--probe.targets-file $f" "targets: $T/$f: cannot read the targets file: $why" "$T/out"
done

# --- the daemon -----------------------------------------------------------------------------------
# start_shim FLAGS...: the shim on a port it picks; sets SHIM_PID, PORT (the log in $T/shim.log)
start_shim() {
	: >"$T/shim.log"
	"$BIN" --web.listen-address 127.0.0.1:0 --mapping.file "$T/map.json" "$@" >/dev/null 2>"$T/shim.log" &
	SHIM_PID=$!
	PORT=
	i=0
	while [ -z "$PORT" ] && [ $i -lt 100 ]; do
		sleep 0.1
		PORT=$(sed -n 's/.*listening on .* (port \([0-9]*\)).*/\1/p' "$T/shim.log")
		i=$((i + 1))
	done
	[ -n "$PORT" ] || { bad "the shim did not start: $(cat "$T/shim.log")"; return 1; }
}
# stop_shim: SIGTERM; it must exit within 10 s
stop_shim() {
	kill -TERM "$SHIM_PID"
	i=0
	while kill -0 "$SHIM_PID" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	if kill -0 "$SHIM_PID" 2>/dev/null; then bad "$1: SIGTERM did not stop the shim in 10 s"; kill -9 "$SHIM_PID"; else ok; fi
	wait "$SHIM_PID" 2>/dev/null
	SHIM_PID=
}
get() { curl -s -m 15 -o "$T/body" -w '%{http_code}' "http://127.0.0.1:$PORT$1"; }

if [ -x "$FAKE" ] && command -v curl >/dev/null; then
	cp "$MAP" "$T/map.json"
	"$FAKE" --port 0 --port-file "$T/fake.port" --dir "$STATE" --token good-token 2>"$T/fake.log" &
	FAKE_PID=$!
	i=0
	while [ ! -s "$T/fake.port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	URL="http://127.0.0.1:$(cat "$T/fake.port")"

	# a FIFO as the token file: it blocked the fetch worker for ever (every scrape 503 and nothing
	# named the file; SIGTERM no longer stopped the daemon)
	start_shim --slurmctld.url "$URL" --slurmctld.auth.token-file "$T/fifo" --slurmctld.timeout 5
	code=$(get /metrics)
	if [ "$code" = 503 ]; then ok; else bad "FIFO token: /metrics answered $code, want 503"; fi
	has "FIFO token: the 503 names the file" "cannot read token file $T/fifo: is a FIFO, not a regular file" "$T/body"
	code=$(get /)
	has "FIFO token: the status page names the file" "cannot read token file $T/fifo: is a FIFO, not a regular file" "$T/body"
	has "FIFO token: logged" "cannot read token file $T/fifo: is a FIFO, not a regular file" "$T/shim.log"
	stop_shim "FIFO token"

	# a directory as the token file: it read as "token file DIR is empty"
	start_shim --slurmctld.url "$URL" --slurmctld.auth.token-file "$T/dir" --slurmctld.timeout 5
	code=$(get /metrics)
	if [ "$code" = 503 ]; then ok; else bad "directory token: /metrics answered $code, want 503"; fi
	has "directory token: the 503 names the file" "cannot read token file $T/dir: is a directory" "$T/body"
	stop_shim "directory token"

	# slurmrestd's token file a FIFO: slurmrestd's documents are down with the file named (status
	# page, log), slurmctld's rows are served, and SIGTERM stops the shim
	printf 'SLURM_JWT=good-token\n' >"$T/ctl.token"
	start_shim --slurmctld.url "$URL" --slurmctld.auth.token-file "$T/ctl.token" --slurmrestd.url "$URL" \
		--slurmrestd.api-version v0.0.44 --slurmrestd.auth.token-file "$T/fifo" --slurmrestd.timeout 5
	code=$(get /metrics)
	if [ "$code" = 200 ] && grep -q '^slurm_exporter_shim_up{endpoint="slurmrestd-nodes"} 0$' "$T/body" &&
		grep -q '^slurm_cpus_alloc ' "$T/body"; then ok; else bad "slurmrestd's FIFO token: /metrics $code"; fi
	code=$(get /)
	has "slurmrestd's FIFO token: the status page names the file" "cannot read token file $T/fifo: is a FIFO, not a regular file" "$T/body"
	has "slurmrestd's FIFO token: logged" "cannot read token file $T/fifo: is a FIFO, not a regular file" "$T/shim.log"
	stop_shim "slurmrestd's FIFO token"

	# a token over 64 KiB is refused whole (it was cut at 16 KiB); one with a control byte too; the
	# next fetch reads the file again: a good token then works without a restart
	{ printf 'SLURM_JWT='; head -c 70000 /dev/zero | tr '\0' a; echo; } >"$T/token"
	start_shim --slurmctld.url "$URL" --slurmctld.auth.token-file "$T/token" --slurmctld.min-interval 0 --slurmctld.jobs.min-interval 0
	code=$(get /metrics)
	has "token over 64 KiB: refused, named" "cannot read token file $T/token: is over 65536 bytes" "$T/body"
	printf 'good\001token\n' >"$T/token"
	code=$(get /metrics)
	has "token with a control byte: refused" "token file $T/token: the token holds a control character (byte 5)" "$T/body"
	printf 'SLURM_JWT=good-token\n' >"$T/token.new"
	mv "$T/token.new" "$T/token"
	code=$(get /metrics)
	if [ "$code" = 200 ]; then ok; else bad "a good token after a bad one: $code, want 200"; fi

	# the mapping swapped for a FIFO, then SIGHUP: it wedged the main thread (no reload, no SIGTERM)
	mv "$T/map.json" "$T/map.saved"
	mkfifo "$T/map.json"
	kill -HUP "$SHIM_PID"
	i=0
	while ! grep -q 'mapping reload failed' "$T/shim.log" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	has "SIGHUP, mapping a FIFO: logged" "mapping: $T/map.json:1:1: cannot read mapping file: is a FIFO, not a regular file" "$T/shim.log"
	has "SIGHUP, mapping a FIFO: the table is kept" "mapping reload failed; keeping the running table" "$T/shim.log"
	code=$(get /metrics)
	if [ "$code" = 200 ] && grep -q '^slurm_cpus_alloc ' "$T/body"; then ok; else bad "SIGHUP, mapping a FIFO: /metrics $code"; fi
	stop_shim "SIGHUP, mapping a FIFO"
	rm "$T/map.json"
	mv "$T/map.saved" "$T/map.json"

	# a probe target's token file a FIFO: that target's endpoints are down with the file named
	printf 'targets:\n  c: {slurmctld_url: "%s", token_file: "%s"}\n' "$URL" "$T/fifo" >"$T/targets.yml"
	start_shim --slurmctld.url "$URL" --probe.targets-file "$T/targets.yml" --slurmctld.timeout 5
	code=$(get '/probe?target=c')
	if [ "$code" = 503 ]; then ok; else bad "target's FIFO token: /probe answered $code, want 503"; fi
	has "target's FIFO token: named" "cannot read token file $T/fifo: is a FIFO, not a regular file" "$T/body"
	stop_shim "target's FIFO token"
else
	echo "skip: the daemon (no $FAKE or curl)"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
