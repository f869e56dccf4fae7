#!/bin/sh
# The command line: legacy flags, exit codes, --check-mapping and --check-exposition output,
# --once on a capture and on a broken replay directory (a FIFO in it), --mapping.to-rules; values
# refused at start (timeouts of 0, a URL without a scheme); the --slurmrestd.* flags and a replay
# with slurmrestd's files; scripts/run.sh HOST:PORT.
cd "$(dirname "$0")/.." || exit 1
BIN=${SHIM_BIN:-./slurm-exporter-shim}
MAP=mappings/prometheus-slurm-exporter.json
STATE=tests/fixtures/slurm-25.11/04-resumed-busy
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
# check "description" expected-exit command...  (stdout+stderr in $T/out)
check() {
	what=$1 want=$2
	shift 2
	"$@" >"$T/out" 2>&1
	got=$?
	if [ "$got" -eq "$want" ]; then ok; else bad "$what: exit $got, want $want"; sed 's/^/    /' "$T/out" | head -5; fi
}
has() { if grep -qF -- "$2" "$T/out"; then ok; else bad "$1: output lacks: $2"; sed 's/^/    /' "$T/out" | head -5; fi; }

check "--version" 0 "$BIN" --version
has "--version" "slurm-exporter-shim, version $(cat VERSION) (revision: "
# the revision is the commit built (the Makefile's git rev-parse), unless built outside git
rev=$(git rev-parse --short=12 HEAD 2>/dev/null)
if [ -n "$rev" ] && ! grep -q "(revision: $rev" "$T/out"; then bad "--version: no revision $rev: $(head -1 "$T/out")"; else ok; fi
# each library's version as the library reports it at run time (pkg-config: the installed ones)
for lib in libmicrohttpd:libmicrohttpd libcurl:libcurl jansson:jansson yajl:yajl libyaml:yaml-0.1 gnutls:gnutls libdeflate:libdeflate; do
	v=$(pkg-config --modversion "${lib#*:}" 2>/dev/null)
	[ -n "$v" ] || continue
	has "--version names ${lib%%:*} $v" "  ${lib%%:*}: "
	if grep "^  ${lib%%:*}: " "$T/out" | grep -qF " $v"; then ok; else bad "--version: ${lib%%:*} is not $v: $(grep "^  ${lib%%:*}:" "$T/out")"; fi
done
check "--help" 0 "$BIN" --help
has "--help" "--slurmctld.url URL"
check "unknown flag" 2 "$BIN" --no-such-flag
has "unknown flag" 'unknown flag "--no-such-flag"'
check "bad bool" 2 "$BIN" -gpus-acct=maybe
has "bad bool" 'flag --gpus-acct: value "maybe" is not a boolean (expected true or false)'
# every number is parsed and range-checked once, from the flag table (src/options.c), with one message
check "missing value" 2 "$BIN" --slurmctld.url
has "missing value" "flag --slurmctld.url: needs a value"
check "bad number" 2 "$BIN" --slurmctld.timeout=soon
has "bad number" 'flag --slurmctld.timeout: value "soon" is not a valid number of seconds (expected 0.001 to 86400)'
check "--web.max-connections 0" 2 "$BIN" --web.max-connections 0 --version
has "--web.max-connections 0" 'flag --web.max-connections: value "0" is not a valid whole number in decimal digits (expected 1 to 65535)'
check "--web.max-connections 65536" 2 "$BIN" --web.max-connections=65536 --version
check "--web.max-connections 1.5" 2 "$BIN" --web.max-connections 1.5 --version
check "--web.max-connections 65535" 0 "$BIN" --web.max-connections 65535 --version
# integer flags take decimal digits only: strtod read 1e3 as 1000 and 0x10 as 16
check "--web.max-connections 1e3" 2 "$BIN" --web.max-connections 1e3 --version
has "--web.max-connections 1e3" 'flag --web.max-connections: value "1e3" is not a valid whole number in decimal digits (expected 1 to 65535)'
check "--web.max-connections 0x10" 2 "$BIN" --web.max-connections 0x10 --version
check "--slurmctld.max-body 1e6" 2 "$BIN" --slurmctld.max-body 1e6 --version
check "--web.connection-timeout 0x1e" 2 "$BIN" --web.connection-timeout 0x1e --version
check "--web.max-connections +5" 2 "$BIN" --web.max-connections +5 --version
check "--web.max-connections 064" 0 "$BIN" --web.max-connections 064 --version
check "--slurmctld.timeout 1e1 (seconds are decimal numbers)" 0 "$BIN" --slurmctld.timeout 1e1 --version
# the listen address is checked at start: the port was taken mod 65536 (:99999 listened on 34463)
check "--web.listen-address :99999" 2 "$BIN" --web.listen-address :99999 --version
has "--web.listen-address :99999" 'flag --web.listen-address: value ":99999" is not a valid [host]:port address (expected port 0 to 65535, an IPv6 host in brackets)'
for a in host: : 9341 :http :-1 ::1:9341 "[::1]" "[]:9341" "[::1:9341" "h st:9341" "a]:9341" localhost:65536; do
	check "--web.listen-address $a" 2 "$BIN" --web.listen-address "$a" --version
	has "--web.listen-address $a" "flag --web.listen-address: value \"$a\" is not a valid [host]:port address"
done
for a in :9341 localhost:65535 127.0.0.1:0 "[::1]:9341" "[::]:9341" 0.0.0.0:9341; do
	check "--web.listen-address $a" 0 "$BIN" --web.listen-address "$a" --version
done
check "-listen-address=:99999" 2 "$BIN" -listen-address=:99999 --version
# the telemetry path is a URL path: without its '/' it was accepted and never matched a request
check "--web.telemetry-path metrics" 2 "$BIN" --web.telemetry-path metrics --version
has "--web.telemetry-path metrics" 'flag --web.telemetry-path: value "metrics" is not a URL path starting with "/"'
check "--web.telemetry-path empty" 2 "$BIN" --web.telemetry-path "" --version
check "--web.telemetry-path /slurm" 0 "$BIN" --web.telemetry-path /slurm --version
check "--slurmctld.max-body 0" 2 "$BIN" --slurmctld.max-body 0 --version
has "--slurmctld.max-body 0" 'flag --slurmctld.max-body: value "0" is not a valid whole number of bytes in decimal digits (expected 1 to 1099511627776)'
check "--slurmctld.min-interval -1" 2 "$BIN" --slurmctld.min-interval -1 --version
check "--slurmctld.min-interval nan" 2 "$BIN" --slurmctld.min-interval nan --version
check "--slurmctld.min-interval 0.5" 0 "$BIN" --slurmctld.min-interval 0.5 --version
check "--slurmctld.jobs.min-interval -1" 2 "$BIN" --slurmctld.jobs.min-interval -1 --version
has "--slurmctld.jobs.min-interval -1" 'flag --slurmctld.jobs.min-interval: value "-1" is not a valid number of seconds (expected 0 to 86400)'
check "--slurmctld.jobs.min-interval 0" 0 "$BIN" --slurmctld.jobs.min-interval 0 --version
check "--log.slow-fetch -1" 2 "$BIN" --log.slow-fetch -1 --version
check "--log.slow-fetch 0" 0 "$BIN" --log.slow-fetch 0 --version
check "--log.level loud" 2 "$BIN" --log.level loud --version
has "--log.level loud" 'flag --log.level: value "loud" is not a valid choice (expected debug, info, warn or error)'
check "--log.level warning" 0 "$BIN" --log.level warning --version
check "--help shows ranges and defaults" 0 "$BIN" --help
has "--help shows ranges and defaults" "simultaneous HTTP connections (1 to 65535, default 64)"
has "--help shows ranges and defaults" 'at the metrics path of that address (default ":9341")'
has "--help lists the log levels" "debug, info, warn or error (default info)"
check "-h" 0 "$BIN" -h
has "-h is listed in --help" "--help, -h"
# values the daemon cannot use are refused at start
check "--slurmctld.timeout 0" 2 "$BIN" --slurmctld.timeout 0 --once --replay-dir "$STATE" --mapping.file "$MAP"
has "--slurmctld.timeout 0" 'flag --slurmctld.timeout: value "0" is not a valid number of seconds (expected 0.001 to 86400)'
check "--web.connection-timeout 0" 2 "$BIN" --web.connection-timeout 0 --once --replay-dir "$STATE" --mapping.file "$MAP"
has "--web.connection-timeout 0" 'flag --web.connection-timeout: value "0" is not a valid whole number of seconds in decimal digits (expected 1 to 86400)'
check "--web.connection-timeout 0.5" 2 "$BIN" --web.connection-timeout 0.5 --once --replay-dir "$STATE" --mapping.file "$MAP"
check "--slurmctld.url without a scheme" 2 "$BIN" --slurmctld.url ctl1:6817 --once --mapping.file "$MAP"
has "--slurmctld.url without a scheme" 'flag --slurmctld.url: value "ctl1:6817" is not an http:// or https:// URL'
check "--slurmctld.url HTTPS://" 0 "$BIN" --slurmctld.url HTTPS://ctl1:6817 --once --replay-dir "$STATE" --mapping.file "$MAP"

# slurmrestd: http(s):// or unix:/path; only the versions the converter reads; replayed from
# DIR/rest_*.json when --slurmrestd.url is set, /jobs only with --slurmrestd.jobs
check "--slurmrestd.url ftp://" 2 "$BIN" --slurmrestd.url ftp://rest1 --version
has "--slurmrestd.url ftp://" 'flag --slurmrestd.url: value "ftp://rest1" is not an http:// or https:// URL or unix:/path/to/socket'
check "--slurmrestd.url unix:relative" 2 "$BIN" --slurmrestd.url unix:sock --version
check "--slurmrestd.url unix:/" 0 "$BIN" --slurmrestd.url unix:/run/slurmrestd.sock --version
check "--slurmrestd.api-version v0.0.40" 2 "$BIN" --slurmrestd.api-version v0.0.40 --once --replay-dir "$STATE" --mapping.file "$MAP"
has "--slurmrestd.api-version v0.0.40" 'flag --slurmrestd.api-version: value "v0.0.40" is not a version this shim reads (v0.0.41 to v0.0.46)'
check "--slurmrestd.timeout 0" 2 "$BIN" --slurmrestd.timeout 0 --version
REST=tests/fixtures/slurm-25.11-rest/R2-busy-mix-draining
printf '%s\n' '{"metrics": [{"name": "n", "help": "h", "type": "gauge", "expr": "slurm_server_thread_cnt", "fidelity": "exact"},' \
	'{"name": "r", "help": "h", "type": "gauge", "expr": "sum(slurmrestd_node_cpus)", "fidelity": "exact"},' \
	'{"name": "j", "help": "h", "type": "gauge", "expr": "sum(slurmrestd_jobs)", "fidelity": "exact", "enabled_by": "slurmrestd-jobs"}]}' >"$T/rest.json"
check "--once without --slurmrestd.url" 0 "$BIN" --once --replay-dir "$REST" --mapping.file "$T/rest.json"
if grep -q 'slurmrestd' "$T/out"; then bad "slurmrestd read without --slurmrestd.url"; else ok; fi
check "--once with slurmrestd" 0 "$BIN" --once --replay-dir "$REST" --mapping.file "$T/rest.json" --slurmrestd.url unix:/unused
has "--once with slurmrestd" 'slurm_exporter_shim_up{endpoint="slurmrestd-nodes"} 1'
has "--once with slurmrestd" 'slurm_exporter_shim_mapping_rows{status="disabled"} 1'
if grep -q 'endpoint="slurmrestd-jobs"' "$T/out"; then bad "/jobs read without --slurmrestd.jobs"; else ok; fi
check "--once with slurmrestd /jobs" 0 "$BIN" --once --replay-dir "$REST" --mapping.file "$T/rest.json" --slurmrestd.url unix:/unused --slurmrestd.jobs
has "--once with slurmrestd /jobs" 'slurm_exporter_shim_up{endpoint="slurmrestd-jobs"} 1'
# "prefer": slurmrestd's form while it can be used, else the native form; a preferred form makes
# nothing fetched or reported about slurmrestd without --slurmrestd.url, /jobs only with --slurmrestd.jobs
printf '%s\n' '{"metrics": [{"name": "p", "help": "h", "type": "gauge", "expr": "slurm_server_thread_cnt", "fidelity": "approximate", "note": "n",' \
	'  "prefer": [{"expr": "sum(slurmrestd_node_cpus)", "fidelity": "exact"}]},' \
	'{"name": "q", "help": "h", "type": "gauge", "fidelity": "unavailable", "note": "n", "prefer": [{"expr": "sum(slurmrestd_jobs)", "fidelity": "exact"}]}]}' >"$T/prefer.json"
check "prefer without --slurmrestd.url" 0 "$BIN" --once --replay-dir "$REST" --mapping.file "$T/prefer.json"
has "prefer without --slurmrestd.url" 'slurm_exporter_shim_row_fidelity{family="p",fidelity="approximate",upstream="slurmctld"} 1'
has "prefer without --slurmrestd.url" 'slurm_exporter_shim_mapping_rows{status="unavailable"} 1'
if grep -q 'slurmrestd' "$T/out"; then bad "prefer: slurmrestd read without --slurmrestd.url"; else ok; fi
check "prefer with slurmrestd" 0 "$BIN" --once --replay-dir "$REST" --mapping.file "$T/prefer.json" --slurmrestd.url unix:/unused
has "prefer with slurmrestd" 'slurm_exporter_shim_row_fidelity{family="p",fidelity="exact",upstream="slurmrestd"} 1'
has "prefer with slurmrestd" 'slurm_exporter_shim_mapping_rows{status="unavailable"} 1'
if grep -q 'endpoint="slurmrestd-jobs"' "$T/out"; then bad "prefer: /jobs read without --slurmrestd.jobs"; else ok; fi
check "prefer with slurmrestd /jobs" 0 "$BIN" --once --replay-dir "$REST" --mapping.file "$T/prefer.json" --slurmrestd.url unix:/unused --slurmrestd.jobs
has "prefer with slurmrestd /jobs" 'slurm_exporter_shim_row_fidelity{family="q",fidelity="exact",upstream="slurmrestd"} 1'
has "prefer with slurmrestd /jobs" 'slurm_exporter_shim_up{endpoint="slurmrestd-jobs"} 1'

# SckyzO/slurm_exporter's flags (the fork prometheus.io lists): accepted, each it has no use for
# warned about once at start; --collector.gpus means --gpus-acct. The fork's unit's command line (docs/migration.md,
# "From SckyzO/slurm_exporter"):
check "the fork's flags" 0 "$BIN" --once --collector.partition --no-collector.gpus --command.timeout=10s --log.format=json \
	--replay-dir "$STATE" --mapping.file "$MAP"
has "the fork's flags: --command.timeout warned" '"msg":"flag --command.timeout is the SckyzO slurm_exporter'"'"'s; the shim runs no Slurm command, ignored"'
has "the fork's flags: an unlisted collector warned" '"msg":"flag --collector.partition looks like a SckyzO slurm_exporter collector flag'
has "the fork's flags: --no-collector.gpus" 'flag --no-collector.gpus is the SckyzO slurm_exporter'"'"'s: the legacy GPU families are not served'
has "the fork's flags: still scrapes" 'slurm_cpus_alloc 42'
# --log.format json: each log line one JSON object with logfmt's fields (level, msg), no other line
if grep -v '^[#a-z]' "$T/out" | python3 -c '
import json, sys
lines = [l for l in sys.stdin.read().splitlines() if l.startswith("{")]
assert len(lines) == 3, lines
for l in lines:
    o = json.loads(l)
    assert sorted(o) == ["level", "msg"] and o["level"] in ("info", "warn"), o
'; then ok; else bad "--log.format json: lines are not JSON objects of level and msg"; fi
# escaped per RFC 8259: a quote, a backslash, a tab, ESC and an invalid byte in a directory name the log
# line shows decode back to the name (the invalid byte as U+FFFD, as Go's encoding/json does)
odd="$T/$(printf 'a"b\\c\td\033e\377f')"
mkdir "$odd"
check "--log.format json, hostile bytes" 1 "$BIN" --once --log.format json --replay-dir "$odd" --mapping.file "$MAP"
if python3 -c '
import json, sys
want = sys.argv[1].encode("utf-8", "surrogateescape").decode("utf-8", "replace")
lines = open(sys.argv[2], "rb").read().decode("utf-8").splitlines()
msgs = [json.loads(l)["msg"] for l in lines]
assert any("replay of " + want + ": " in m for m in msgs), (want, msgs)
assert all(ord(c) >= 0x20 for l in lines for c in l), "a raw control character in a line"
' "$odd" "$T/out"; then ok; else bad "--log.format json: hostile bytes not escaped per RFC 8259"; sed 's/^/    /' "$T/out" | head -3; fi
check "the fork's flags, each once" 0 "$BIN" --once --command.timeout 5s --command.timeout=1m30s --collector.queue --no-collector.queue \
	--slurm.bin-path /usr/bin --web.disable-exporter-metrics --collector.sacct.interval 1h --collector.nodes.feature-set=false \
	--replay-dir "$STATE" --mapping.file "$MAP"
if [ "$(grep -c 'command.timeout' "$T/out")" = 1 ] && [ "$(grep -c 'collector.queue' "$T/out")" = 1 ]; then ok; else bad "the fork's flags: not one warning per flag"; fi
has "the fork's flags: --web.disable-exporter-metrics" 'flag --web.disable-exporter-metrics is the SckyzO slurm_exporter'
has "the fork's flags: a value apart" 'flag --collector.sacct.interval is the SckyzO'
check "--collector.gpus is --gpus-acct" 0 "$BIN" --once --collector.gpus --replay-dir "$STATE" --mapping.file "$MAP"
has "--collector.gpus is --gpus-acct" 'slurm_exporter_shim_mapping_rows{status="disabled"} 0'
has "--collector.gpus says so" 'the legacy GPU families are served, as with the shim'"'"'s --gpus-acct'
check "--no-collector.gpus after --gpus-acct" 0 "$BIN" --once --gpus-acct --no-collector.gpus --replay-dir "$STATE" --mapping.file "$MAP"
has "--no-collector.gpus after --gpus-acct" 'slurm_exporter_shim_mapping_rows{status="disabled"} 4'
check "--command.timeout soon" 2 "$BIN" --command.timeout soon --version
has "--command.timeout soon" 'flag --command.timeout (the SckyzO slurm_exporter'"'"'s): value "soon" is not a duration (expected e.g. 5s, 1m30s)'
check "--command.timeout without a value" 2 "$BIN" --command.timeout
check "--collector.queue=maybe" 2 "$BIN" --collector.queue=maybe --version
has "--collector.queue=maybe" 'flag --collector.queue (the SckyzO slurm_exporter'"'"'s): value "maybe" is not a boolean (expected true or false)'
check "--no-collector.queue=true" 2 "$BIN" --no-collector.queue=true --version
has "--no-collector.queue=true" 'flag --no-collector.queue (the SckyzO slurm_exporter'"'"'s) takes no value'
check "--collector.gpus=false" 0 "$BIN" --once --gpus-acct --collector.gpus=false --replay-dir "$STATE" --mapping.file "$MAP"
has "--collector.gpus=false" 'slurm_exporter_shim_mapping_rows{status="disabled"} 4'
check "-collector.gpus (kingpin spells it with two dashes)" 2 "$BIN" -collector.gpus --version
has "-collector.gpus" 'unknown flag "-collector.gpus"'
check "--no-command.timeout" 2 "$BIN" --no-command.timeout --version
# the fork's --log.format takes json or text (text, its default since its v1.3, is key=value lines):
# --log.format=text in its unit starts the shim, logging logfmt
check "--log.format text (the fork's default)" 0 "$BIN" --once --log.format=text --command.timeout 5s --replay-dir "$STATE" --mapping.file "$MAP"
has "--log.format text is logfmt" 'level=warn msg="flag --command.timeout is the SckyzO slurm_exporter'
check "--log.format txt" 2 "$BIN" --log.format txt --version
has "--log.format txt" 'flag --log.format: value "txt" is not a valid choice (expected logfmt or json)'
# the fork's 2.0 flags are named as its own, not as an unknown collector
check "the fork's 2.0 flags" 0 "$BIN" --once --collector.node.gres=false --no-collector.queue.terminal-states --replay-dir "$STATE" --mapping.file "$MAP"
has "--collector.node.gres" 'flag --collector.node.gres is the SckyzO slurm_exporter'"'"'s; the shim serves no slurm_node_gres_*'
has "--no-collector.queue.terminal-states" 'flag --no-collector.queue.terminal-states is the SckyzO slurm_exporter'"'"'s; the shim runs no squeue'

# the upstream is not slurmctld: its metrics path as --slurmctld.url is refused at start, naming the base URL
check "--slurmctld.url .../metrics" 2 "$BIN" --slurmctld.url http://ctl:6817/metrics --once --mapping.file "$MAP"
has "--slurmctld.url .../metrics" 'flag --slurmctld.url: value "http://ctl:6817/metrics" is slurmctld'"'"'s metrics path, not its base URL: give http://ctl:6817'
check "--slurmctld.url .../metrics/nodes/" 2 "$BIN" --slurmctld.url http://a:6817,http://u:pw@ctl:6817/metrics/nodes/ --version
has "--slurmctld.url .../metrics/nodes/: no password shown" 'value "http://***@ctl:6817/metrics/nodes/" is slurmctld'"'"'s metrics path, not its base URL: give http://***@ctl:6817 '
check "--slurmctld.url with a path prefix" 0 "$BIN" --slurmctld.url http://proxy/slurm/ --version
# ... and an exporter's page where slurmctld's answer should be is not served as slurmctld's
cp -r "$STATE" "$T/exporter"
cp "$STATE/legacy_exporter_metrics.txt" "$T/exporter/metrics_nodes.txt"
check "--once, the old exporter's page as /metrics/nodes" 0 "$BIN" --once --replay-dir "$T/exporter" --mapping.file "$MAP"
has "the old exporter's page: nodes down" 'slurm_exporter_shim_up{endpoint="nodes"} 0'
has "the old exporter's page: why" "/metrics/nodes failed: replay of $T/exporter: an exporter's page, not slurmctld's (it has slurm_"
printf '# HELP go_goroutines Number of goroutines.\n# TYPE go_goroutines gauge\ngo_goroutines 9\n' >"$T/exporter/metrics_scheduler.txt"
cat "$STATE/metrics_scheduler.txt" >>"$T/exporter/metrics_scheduler.txt"
check "--once, go_* families in /metrics/scheduler" 0 "$BIN" --once --replay-dir "$T/exporter" --mapping.file "$MAP"
has "go_* families: why" "an exporter's page, not slurmctld's (it has go_goroutines)"

# one upstream failure is one log line: the endpoints, the URL fetched (userinfo hidden), curl's words
# once and a hint (it was a line per endpoint, each with curl's text twice, and the 503 body again)
check "--once, slurmctld refuses" 1 "$BIN" --once --slurmctld.url http://u:secret@127.0.0.1:1 --mapping.file "$MAP"
if [ "$(wc -l <"$T/out")" = 2 ] && grep -q '^level=warn msg="endpoints /metrics/nodes, /metrics/partitions, /metrics/scheduler and /metrics/jobs-users-accts failed: slurmctld http://\*\*\*@127.0.0.1:1: ' "$T/out" &&
	grep -q "is slurmctld up, and is the URL's port its SlurmctldPort (slurm.conf)?\"$" "$T/out" &&
	[ "$(grep -o "Couldn't connect to server" "$T/out" | wc -l)" = 1 ] && ! grep -q secret "$T/out"; then ok; else
	bad "one failure, one line:"; sed 's/^/    /' "$T/out"; fi
has "--once, slurmctld refuses: the last line" 'no slurmctld metrics endpoint answered usably (each failure is logged above)'
check "--once, slurmctld refuses, --log.level error" 1 "$BIN" --once --slurmctld.url http://127.0.0.1:1 --mapping.file "$MAP" --log.level error
has "--log.level error: the reasons in the 503 text" '/metrics/nodes: Failed to connect to 127.0.0.1 port 1'

# the old exporter's spellings are accepted
check "legacy flags" 0 "$BIN" -listen-address=127.0.0.1:1 -gpus-acct=false --once --replay-dir "$STATE" --mapping.file "$MAP"
check "legacy flags 2" 0 "$BIN" -listen-address 127.0.0.1:1 -gpus-acct --once --replay-dir "$STATE" --mapping.file "$MAP"
has "-gpus-acct enables GPU rows" 'slurm_exporter_shim_mapping_rows{status="disabled"} 0'

check "--check-mapping shipped" 0 "$BIN" --check-mapping "$MAP"
has "--check-mapping shipped" "OK, 62 rows"
cat >"$T/broken.json" <<'J'
{
  "metrics": [
    {"name": "slurm_cpus_alloc", "help": "Allocated CPUs", "type": "gauge",
     "expr": "sum(slurm_node_cpus_alloc", "fidelity": "exact"},
    {"name": "slurm_cpus_idle", "help": "Idle CPUs", "type": "gauge", "expr": "x", "fidelity": "approximate"}
  ]
}
J
check "--check-mapping broken" 1 "$BIN" --check-mapping "$T/broken.json"
has "--check-mapping broken: expr position" "$T/broken.json:4:40: row 'slurm_cpus_alloc': expr: expected ')' to close aggregation"
has "--check-mapping broken: second problem" "$T/broken.json:5:5: row 'slurm_cpus_idle': a row that is not exact needs a \"note\""
check "start with a broken mapping" 1 "$BIN" --once --replay-dir "$STATE" --mapping.file "$T/broken.json"
has "start with a broken mapping" "mapping: $T/broken.json:4:40"

# nesting deeper than the parser allows is a positioned error, not a stack overflow
# (100,000 parentheses; 5,000 nested sum() once passed the check and crashed the first scrape)
deep() { # deep FILE OPEN LEAF CLOSE N
	awk -v o="$2" -v l="$3" -v c="$4" -v n="$5" 'BEGIN {
		printf "{\"metrics\": [{\"name\": \"a\", \"help\": \"h\", \"type\": \"gauge\", \"fidelity\": \"approximate\", \"note\": \"n\",\n \"expr\": \""
		for (i = 0; i < n; i++) printf "%s", o
		printf "%s", l
		for (i = 0; i < n; i++) printf "%s", c
		printf "\"}]}\n" }' >"$1"
}
deep "$T/deep.json" "(" slurm_node_cpus ")" 100000
check "--check-mapping 100000 parentheses" 1 "$BIN" --check-mapping "$T/deep.json"
has "--check-mapping 100000 parentheses" "$T/deep.json:2:269: row 'a': expr: expression nested deeper than 258 levels"
deep "$T/deep.json" "sum(" slurm_node_cpus ")" 5000
check "--once, 5000 nested sum()" 1 "$BIN" --once --replay-dir "$STATE" --mapping.file "$T/deep.json"
has "--once, 5000 nested sum()" "row 'a': expr: expression nested deeper than 258 levels"
deep "$T/deep.json" "" slurm_node_cpus " + slurm_node_cpus" 20000
check "--check-mapping 20000-term chain" 1 "$BIN" --check-mapping "$T/deep.json"
has "--check-mapping 20000-term chain" "row 'a': expr: expression deeper than 128 levels"

# a loader's problems are escaped where they are written (--check-mapping prints them so): the log
# line keeps those escapes, escaping nothing twice (it logged \"a\\\"b\\x1b[1m\", a backslash per level)
printf 'targets:\n  "a\\"b\\e[1m":\n    slurmctld_url: http://x:1\n' >"$T/hostile.yml"
check "targets file with a hostile name" 2 "$BIN" --probe.targets-file "$T/hostile.yml" --once --replay-dir "$STATE" --mapping.file "$MAP"
has "hostile target name logged escaped once" "level=error msg=\"targets: $T/hostile.yml:2:3: target name \\\"a\\\"b\\x1b[1m\\\" is not"
if grep -q 'x5c\|\\\\x1b' "$T/out"; then bad "hostile target name escaped twice"; else ok; fi

check "--once" 0 "$BIN" --once --replay-dir "$STATE" --mapping.file "$MAP"
has "--once" "slurm_cpus_alloc 42"
mkdir "$T/empty"
check "--once, nothing to read" 1 "$BIN" --once --replay-dir "$T/empty" --mapping.file "$MAP"
has "--once, nothing to read" "no slurmctld metrics endpoint answered usably"
has "--once, nothing to read" "metrics_nodes.txt"

# a family missing from a good answer: the rows reading it are left out and say which family
cp -r "$STATE" "$T/nomixed"
grep -v 'slurm_nodes_mixed' "$STATE/metrics_nodes.txt" >"$T/nomixed/metrics_nodes.txt"
check "--once, slurm_nodes_mixed missing" 0 "$BIN" --once --replay-dir "$T/nomixed" --mapping.file "$MAP"
has "slurm_nodes_mixed missing: left out" 'slurm_exporter_shim_family_left_out{family="slurm_nodes_alloc",reason="input_missing"} 1'
has "slurm_nodes_mixed missing: logged" 'family slurm_nodes_alloc left out: native family slurm_nodes_mixed is absent from /metrics/nodes'
if grep -q '^slurm_nodes_alloc \|^slurm_nodes_mix ' "$T/out"; then bad "slurm_nodes_mixed missing: a value is still served"; else ok; fi
has "slurm_nodes_mixed missing: the rest is served" 'slurm_cpus_alloc 42'
# a nodes answer naming no family is not an answer
printf '# nothing\n' >"$T/nomixed/metrics_nodes.txt"
check "--once, nodes names no family" 0 "$BIN" --once --replay-dir "$T/nomixed" --mapping.file "$MAP"
has "nodes names no family: down" 'slurm_exporter_shim_up{endpoint="nodes"} 0'
has "nodes names no family: why" "/metrics/nodes failed: replay of $T/nomixed: the answer (10 bytes) names no metric family"

# invalid UTF-8 in a node name and an account name (slurmctld copies them verbatim): the output is
# valid UTF-8 for Prometheus, the families are still served, and the repair is counted
cp -r "$STATE" "$T/utf8"
sed 's/node="n2"/node="n2\xff"/; s/node="n3"/node="n3\xc0\xafx"/' "$STATE/metrics_nodes.txt" >"$T/utf8/metrics_nodes.txt"
sed 's/account="odd"/account="od\xed\xa0\x80d"/' "$STATE/metrics_jobs-users-accts.txt" >"$T/utf8/metrics_jobs-users-accts.txt"
check "--once, invalid UTF-8" 0 sh -c "\"$BIN\" --once --replay-dir \"$T/utf8\" --mapping.file \"$MAP\" 2>\"$T/err\""
if python3 -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8")' "$T/out"; then ok; else bad "invalid UTF-8: output is not valid UTF-8"; fi
has "invalid UTF-8: node served" "$(printf 'slurm_node_cpu_alloc{node="n2\357\277\275",status="allocated"} 8')"
has "invalid UTF-8: overlong, one U+FFFD per byte" "$(printf 'node="n3\357\277\275\357\277\275x"')"
has "invalid UTF-8: account served" "$(printf 'slurm_account_jobs_pending{account="od\357\277\275\357\277\275\357\277\275d\\"acct')"
has "invalid UTF-8: counted" 'slurm_exporter_shim_invalid_utf8_repaired 16'
has "invalid UTF-8: sums unharmed" 'slurm_cpus_alloc 42'
if grep -q 'family slurm_node_cpu_alloc served: label values with invalid UTF-8' "$T/err"; then ok; else bad "invalid UTF-8: not logged"; fi
if command -v promtool >/dev/null; then
	# Prometheus' own parser (its lint findings about *_total gauges aside)
	if promtool check metrics <"$T/out" 2>&1 | grep -q 'parsing error'; then bad "invalid UTF-8: promtool refuses the output"; else ok; fi
fi
# two names that repair to the same bytes: no duplicate series, the per-node rows are left out
sed 's/node="n2"/node="n\xff"/; s/node="n3"/node="n\xfe"/' "$STATE/metrics_nodes.txt" >"$T/utf8/metrics_nodes.txt"
check "--once, colliding repairs" 0 "$BIN" --once --replay-dir "$T/utf8" --mapping.file "$MAP"
has "colliding repairs: left out" 'slurm_exporter_shim_family_left_out{family="slurm_node_cpu_alloc",reason="error"} 1'
if grep -q '^slurm_node_cpu_alloc{' "$T/out"; then bad "colliding repairs: per-node series served"; else ok; fi
has "colliding repairs: sums unharmed" 'slurm_cpus_alloc 42'

# control bytes in a node name (slurmctld copies them verbatim): served as U+FFFD, never raw (ESC
# would reach every terminal that shows the value), counted with the invalid UTF-8 repairs
sed 's/node="n2"/node="n2\x1b[31m"/; s/node="n3"/node="n3\rx\x7f"/' "$STATE/metrics_nodes.txt" >"$T/utf8/metrics_nodes.txt"
cp "$STATE/metrics_jobs-users-accts.txt" "$T/utf8/"
check "--once, control bytes in a node name" 0 "$BIN" --once --replay-dir "$T/utf8" --mapping.file "$MAP"
if LC_ALL=C grep -q "$(printf '[\033\r\177]')" "$T/out"; then bad "control bytes: served raw"; else ok; fi
has "control bytes: ESC replaced" "$(printf 'slurm_node_cpu_alloc{node="n2\357\277\275[31m",status="allocated"} 8')"
has "control bytes: CR and DEL replaced" "$(printf 'node="n3\357\277\275x\357\277\275"')"
has "control bytes: counted" 'slurm_exporter_shim_invalid_utf8_repaired 12'
has "control bytes: sums unharmed" 'slurm_cpus_alloc 42'

# a FIFO in the replay directory is refused at once (open with O_NONBLOCK, then fstat), not read
mkdir "$T/fifo"
cp "$STATE"/metrics_*.txt "$T/fifo/"
rm "$T/fifo/metrics_scheduler.txt" # (metrics_jobs.txt is not read by the shipped table)
mkfifo "$T/fifo/metrics_scheduler.txt"
check "--once, a FIFO in --replay-dir" 0 timeout 20 "$BIN" --once --replay-dir "$T/fifo" --mapping.file "$MAP"
has "--once, a FIFO in --replay-dir" "metrics_scheduler.txt: is a FIFO, not a regular file"
has "--once, a FIFO in --replay-dir: the other endpoints still count" "slurm_cpus_alloc 42"

printf 'a{x="1"} 1\nb 2\n' >"$T/good.txt"
printf 'a{x="1"} 1\nb two\n' >"$T/bad.txt"
check "--check-exposition good" 0 sh -c "\"$BIN\" --check-exposition < \"$T/good.txt\""
check "--check-exposition bad" 1 sh -c "\"$BIN\" --check-exposition < \"$T/bad.txt\""
has "--check-exposition bad" "line 2: invalid sample value"

check "--mapping.to-rules" 0 "$BIN" --mapping.file "$MAP" --slurmctld.url http://ctl.example:6817 --web.listen-address shim.example:9999 --mapping.to-rules "$T/rules"
# scrape.yml: the shim's passthrough at its listen address; scrape-direct.yml: slurmctld itself
if grep -q 'record: slurm_nodes_alloc' "$T/rules/rules.yml" && grep -q 'targets: \["ctl.example:6817"\]' "$T/rules/scrape-direct.yml" &&
	grep -q 'metrics_path: /metrics/jobs-users-accts$' "$T/rules/scrape-direct.yml" &&
	grep -q 'targets: \["shim.example:9999"\]' "$T/rules/scrape.yml" &&
	grep -q 'metrics_path: /native/metrics/jobs-users-accts$' "$T/rules/scrape.yml" &&
	! grep -q 'ctl.example\|metrics_path: /metrics/' "$T/rules/scrape.yml"; then ok; else bad "--mapping.to-rules content"; fi
check "--mapping.to-rules, listening everywhere" 0 "$BIN" --mapping.file "$MAP" --web.listen-address :9341 --mapping.to-rules "$T/rules2"
if grep -q 'targets: \["localhost:9341"\]' "$T/rules2/scrape.yml"; then ok; else bad "--mapping.to-rules: :9341 is not scraped at localhost:9341"; fi
# several controllers: scrape-direct.yml scrapes the first one (a target list "a:6817,b" would be no target at all)
check "--mapping.to-rules, several controllers" 0 "$BIN" --mapping.file "$MAP" --slurmctld.url http://ctl1.example:6817,http://ctl2.example:6817 --mapping.to-rules "$T/rules3"
if grep -q 'targets: \["ctl1.example:6817"\]' "$T/rules3/scrape-direct.yml" && grep -q 'several controllers' "$T/rules3/scrape-direct.yml" &&
	! grep -q 'ctl2' "$T/rules3/scrape-direct.yml"; then ok; else bad "--mapping.to-rules: several controllers in scrape-direct.yml"; fi
# a symlink planted at the old fixed temporary name (DIR/rules.yml.tmp) is never followed: the file it
# points at stays as it was, each file is written through a new temporary name and renamed, none is left
mkdir "$T/rules4"
printf 'not yours\n' >"$T/victim"
ln -s "$T/victim" "$T/rules4/rules.yml.tmp"
ln -s "$T/victim" "$T/rules4/scrape.yml"
check "--mapping.to-rules, planted symlinks" 0 "$BIN" --mapping.file "$MAP" --mapping.to-rules "$T/rules4"
if [ "$(cat "$T/victim")" = "not yours" ] && [ -L "$T/rules4/rules.yml.tmp" ] && [ -f "$T/rules4/rules.yml" ] &&
	[ ! -L "$T/rules4/rules.yml" ] && [ ! -L "$T/rules4/scrape.yml" ] && grep -q 'record: slurm_nodes_alloc' "$T/rules4/rules.yml" &&
	[ "$(find "$T/rules4" -name '.*' ! -name . | wc -l)" -eq 0 ]; then ok; else bad "--mapping.to-rules follows a planted symlink"; ls -la "$T/rules4"; fi
if [ "$(stat -c %a "$T/rules4/rules.yml")" = "$(printf '%o' $((0644 & ~0$(umask))))" ]; then ok; else bad "--mapping.to-rules: rules.yml mode $(stat -c %a "$T/rules4/rules.yml")"; fi
# native forms only: Prometheus scrapes slurmctld, not slurmrestd (rows unavailable natively have no rule)
if grep -q 'slurmrestd\|record: slurm_account_fairshare' "$T/rules/rules.yml" "$T/rules/scrape.yml" "$T/rules/scrape-direct.yml"; then bad "--mapping.to-rules exports a slurmrestd form"; else ok; fi

# scripts/run.sh HOST:PORT (no scheme) serves that slurmctld, as http://HOST:PORT. run.sh builds first,
# so it is run only where the build is there (then make has nothing to do).
FAKE=${FAKE_SLURMCTLD:-build/tests/fake_slurmctld}
if [ -x ./slurm-exporter-shim ] && [ -x "$FAKE" ]; then
	"$FAKE" --port 0 --port-file "$T/fake.port" --dir "$STATE" 2>"$T/fake.log" &
	fake=$!
	i=0
	while [ ! -s "$T/fake.port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	port=$(cat "$T/fake.port")
	check "run.sh 127.0.0.1:PORT --once" 0 scripts/run.sh "127.0.0.1:$port" --once
	has "run.sh without a scheme says what it uses" "run.sh: no scheme given: using http://127.0.0.1:$port"
	has "run.sh without a scheme reads that slurmctld" "slurm_cpus_alloc 42"
	check "run.sh ftp://x" 2 scripts/run.sh ftp://ctl1:6817 --once
	kill "$fake"
	wait "$fake" 2>/dev/null
else
	echo "skip: scripts/run.sh (no ./slurm-exporter-shim or $FAKE)"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
