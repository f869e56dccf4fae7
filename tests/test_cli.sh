#!/bin/sh
# The command line: legacy flags, exit codes, --check-mapping and --check-exposition output,
# --once on a capture and on a broken replay directory, --mapping.to-rules.
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
has "--version" "slurm-exporter-shim $(cat VERSION)"
check "--help" 0 "$BIN" --help
has "--help" "--slurmctld.url URL"
check "unknown flag" 2 "$BIN" --no-such-flag
has "unknown flag" 'unknown flag "--no-such-flag"'
check "missing value" 2 "$BIN" --slurmctld.url
check "bad number" 2 "$BIN" --slurmctld.timeout=soon
check "bad bool" 2 "$BIN" -gpus-acct=maybe

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

# issue 12: nesting deeper than the parser allows is a positioned error, not a stack overflow
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

check "--once" 0 "$BIN" --once --replay-dir "$STATE" --mapping.file "$MAP"
has "--once" "slurm_cpus_alloc 42"
mkdir "$T/empty"
check "--once, nothing to read" 1 "$BIN" --once --replay-dir "$T/empty" --mapping.file "$MAP"
has "--once, nothing to read" "no slurmctld metrics endpoint answered usably"
has "--once, nothing to read" "metrics_jobs.txt"

printf 'a{x="1"} 1\nb 2\n' >"$T/good.txt"
printf 'a{x="1"} 1\nb two\n' >"$T/bad.txt"
check "--check-exposition good" 0 sh -c "\"$BIN\" --check-exposition < \"$T/good.txt\""
check "--check-exposition bad" 1 sh -c "\"$BIN\" --check-exposition < \"$T/bad.txt\""
has "--check-exposition bad" "line 2: invalid sample value"

check "--mapping.to-rules" 0 "$BIN" --mapping.file "$MAP" --slurmctld.url http://ctl.example:6817 --mapping.to-rules "$T/rules"
if grep -q 'record: slurm_nodes_alloc' "$T/rules/rules.yml" && grep -q 'targets: \["ctl.example:6817"\]' "$T/rules/scrape.yml"; then ok; else bad "--mapping.to-rules content"; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
