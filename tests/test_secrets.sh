#!/bin/sh
# Secrets never leave the shim except in the request they are for: with a user and password in
# --slurmctld.url (two controllers), --slurmrestd.url and a probe target's slurmctld_url, and a
# token file, nothing of the passwords or the token appears in /metrics, /probe, the native
# passthrough, the status page, the 503 body or anywhere in the log (the URLs are shown as
# http://***@host:port: src/cred.c), nor in --compare-legacy's error or --mapping.to-rules' files.
# A user name with a CR, LF or other control byte (header injection) is refused at start.
# Env: SHIM_BIN, FAKE_SLURMCTLD. Run from the repository root. Needs curl.
cd "$(dirname "$0")/.." || exit 1
BIN=${SHIM_BIN:-./slurm-exporter-shim}
FAKE=${FAKE_SLURMCTLD:-build/tests/fake_slurmctld}
MAP=mappings/prometheus-slurm-exporter.json
STATE=tests/fixtures/slurm-25.11-rest/R2-busy-mix-draining
T=$(mktemp -d /tmp/shim-test-secrets.XXXXXX) || exit 1
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
has() { if grep -qF -- "$2" "$3"; then ok; else bad "$1: lacks: $2"; sed 's/^/    /' "$3" | head -5; fi; }
# no_secret WHAT FILE: none of the passwords nor the token is in FILE
no_secret() {
	if grep -qE 'ctlPASS|restPASS|probePASS|legacyPASS|sEcReT-tOkEn' "$2"; then
		bad "$1: a secret is shown:"
		grep -E 'ctlPASS|restPASS|probePASS|legacyPASS|sEcReT-tOkEn' "$2" | head -3 | sed 's/^/    /'
	else
		ok
	fi
}

# --- user names are header values: refused at start with a control byte -------------------------
for flag in --slurmctld.auth.user --slurmrestd.auth.user; do
	timeout 20 "$BIN" "$flag" "$(printf 'slurm\r\nX-Injected: 1')" --version >"$T/out" 2>&1
	if [ $? -eq 2 ]; then ok; else bad "$flag with CR LF: not refused"; fi
	has "$flag with CR LF" "flag $flag: value \"slurm\\x0d\\x0aX-Injected: 1\" is not a user name (no control characters, at most 255 bytes)" "$T/out"
done
timeout 20 "$BIN" --slurmctld.auth.user "slurm-exporter" --version >"$T/out" 2>&1 && ok || bad "a plain user name refused"

if ! [ -x "$FAKE" ] || ! command -v curl >/dev/null; then
	echo "skip: the daemon (no $FAKE or curl)"
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
	exit
fi

"$FAKE" --port 0 --port-file "$T/fake.port" --dir "$STATE" --token sEcReT-tOkEn 2>"$T/fake.log" &
FAKE_PID=$!
i=0
while [ ! -s "$T/fake.port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
HP="127.0.0.1:$(cat "$T/fake.port")"
printf 'SLURM_JWT=sEcReT-tOkEn\n' >"$T/token"
printf 'targets:\n  other:\n    slurmctld_url: "http://probe:probePASS@%s"\n    token_file: "%s"\n' "$HP" "$T/token" >"$T/targets.yml"

: >"$T/shim.log"
"$BIN" --web.listen-address 127.0.0.1:0 --mapping.file "$MAP" \
	--slurmctld.url "http://ctl:ctlPASS1@$HP,http://ctl:ctlPASS2@127.0.0.1:1" --slurmctld.auth.token-file "$T/token" \
	--slurmctld.auth.user slurm --slurmrestd.url "http://rest:restPASS@$HP" --slurmrestd.auth.token-file "$T/token" \
	--probe.targets-file "$T/targets.yml" --slurmctld.min-interval 0 --slurmctld.jobs.min-interval 0 \
	--log.level debug >/dev/null 2>"$T/shim.log" &
SHIM_PID=$!
PORT=
i=0
while [ -z "$PORT" ] && [ $i -lt 100 ]; do
	sleep 0.1
	PORT=$(sed -n 's/.*listening on .* (port \([0-9]*\)).*/\1/p' "$T/shim.log")
	i=$((i + 1))
done
[ -n "$PORT" ] || bad "the shim did not start: $(cat "$T/shim.log")"
for path in /metrics / '/probe?target=other' /native/metrics/nodes /metrics; do
	curl -s -m 20 "http://127.0.0.1:$PORT$path" >>"$T/pages"
	echo >>"$T/pages"
done
has "/metrics serves (the fake took the token)" 'slurm_exporter_shim_up{endpoint="slurmrestd-nodes"} 1' "$T/pages"
has "controller_info shows the URL without its userinfo" "slurm_exporter_shim_controller_info{url=\"http://***@$HP\",role=\"primary\"} 1" "$T/pages"
has "the status page lists the controllers" "<code>http://***@127.0.0.1:1</code>" "$T/pages"
has "the log shows the URLs without their userinfo" "slurmctld http://***@$HP,http://***@127.0.0.1:1, slurmrestd http://***@$HP" "$T/shim.log"
has "the probe target's log line" "probe target other: slurmctld http://***@$HP" "$T/shim.log"
no_secret "pages" "$T/pages"
# the fake stopped: every controller is down, and the 503 and the status page say why
kill "$FAKE_PID"
wait "$FAKE_PID" 2>/dev/null
FAKE_PID=
curl -s -m 30 "http://127.0.0.1:$PORT/metrics" >>"$T/pages"
curl -s -m 30 "http://127.0.0.1:$PORT/" >>"$T/pages"
has "the 503 names the controllers without their userinfo" "http://***@127.0.0.1:1: down" "$T/pages"
no_secret "pages after a failure" "$T/pages"
kill -TERM "$SHIM_PID"
wait "$SHIM_PID"
SHIM_PID=
no_secret "the whole log" "$T/shim.log"

# --compare-legacy's error names the URL without its userinfo; --mapping.to-rules' files hold none
timeout 60 "$BIN" --compare-legacy "http://old:legacyPASS@127.0.0.1:1/metrics" --replay-dir tests/fixtures/slurm-25.11/01-idle \
	--mapping.file "$MAP" >"$T/out" 2>&1
has "--compare-legacy error" "the old exporter cannot be read: http://***@127.0.0.1:1/metrics" "$T/out"
no_secret "--compare-legacy" "$T/out"
timeout 20 "$BIN" --mapping.file "$MAP" --slurmctld.url "http://ctl:ctlPASS@ctl.example:6817" --mapping.to-rules "$T/rules" >"$T/out" 2>&1
cat "$T/rules"/* >>"$T/out"
has "--mapping.to-rules: the target without userinfo" 'targets: ["ctl.example:6817"]' "$T/out"
has "--mapping.to-rules: says so" "holds a user and password: they are not copied" "$T/out"
no_secret "--mapping.to-rules" "$T/out"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
