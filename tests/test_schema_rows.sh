#!/bin/sh
# The schemas served and their rows by fidelity, where an admin reads them: `--version` with
# --mapping.file, the self metric slurm_exporter_shim_schema_rows{schema,fidelity} on every schema's
# page, and the status page's Schemas table (paths, listeners, counts). Every count is checked
# against one python3 computes from the JSON files here (a row counts by the best fidelity of its
# own and its "prefer" forms), on the shipped tables and on a small one made here with rows of all
# three fidelities and a preferred form better than its native one. --once prints no such family
# (its output stays what it was). Against fake_slurmctld, 127.0.0.1 only. Last line "N passed, M failed".
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
fake_test schema-rows
STATE=tests/fixtures/slurm-25.11-rest/R2-busy-mix-draining
LOAD=mappings/slurm-node-load.json
MIN_INTERVAL=600

# a table of five rows: 2 exact (one only through its preferred form), 1 approximate, 2 unavailable
cat >"$TMP/mixed-fidelity.json" <<'JSON'
{"metrics": [
 {"name": "t_a", "help": "h", "type": "gauge", "fidelity": "exact", "expr": "slurm_nodes"},
 {"name": "t_b", "help": "h", "type": "gauge", "fidelity": "approximate", "note": "n", "expr": "slurm_nodes",
  "prefer": [{"expr": "count(slurmrestd_node_cpus)", "fidelity": "exact"}]},
 {"name": "t_c", "help": "h", "type": "gauge", "fidelity": "approximate", "note": "n", "expr": "slurm_nodes"},
 {"name": "t_d", "help": "h", "type": "gauge", "fidelity": "unavailable", "note": "no source"},
 {"name": "t_e", "help": "h", "type": "gauge", "fidelity": "unavailable", "note": "no source either"}
]}
JSON
FILES="$MAPPING $LOAD $TMP/mixed-fidelity.json"
RIV=
[ -f mappings/rivosinc-slurm-exporter.json ] && RIV="--mapping.file mappings/rivosinc-slurm-exporter.json" &&
	FILES="$FILES mappings/rivosinc-slurm-exporter.json"

# want FILE...: "stem exact approximate unavailable rows" per file, counted by python3 from the JSON
want() {
	python3 - "$@" <<'PY'
import json, os, sys
order = ["exact", "approximate", "unavailable"]
for path in sys.argv[1:]:
    rows = json.load(open(path))["metrics"]
    n = [0, 0, 0]
    for r in rows:
        n[min(order.index(f["fidelity"]) for f in [r] + r.get("prefer", []))] += 1
    print(os.path.basename(path)[:-5], n[0], n[1], n[2], len(rows))
PY
}
# shellcheck disable=SC2086 # FILES is a word list
want $FILES >"$TMP/want"
check "the made table counts 2 exact, 1 approximate, 2 unavailable" grep -qx 'mixed-fidelity 2 1 2 5' "$TMP/want"

# ---- --version
args=
for f in $FILES; do args="$args --mapping.file $f"; done
# shellcheck disable=SC2086
"$SHIM_BIN" --version $args >"$TMP/version" 2>&1
sed -n 's/^  schema: *\([^ ]*\) (.*): \([0-9]*\) rows, \([0-9]*\) exact, \([0-9]*\) approximate, \([0-9]*\) unavailable$/\1 \3 \4 \5 \2/p' \
	"$TMP/version" >"$TMP/got"
check "--version with --mapping.file: each schema's rows by fidelity, as python counts them" cmp -s "$TMP/want" "$TMP/got"
cmp -s "$TMP/want" "$TMP/got" || { cat "$TMP/version"; diff "$TMP/want" "$TMP/got"; }
check "--version names the first schema as the metrics path's" grep -q "schema: *prometheus-slurm-exporter ($MAPPING, at the metrics path)" "$TMP/version"
"$SHIM_BIN" --version >"$TMP/version0" 2>&1
check "--version without --mapping.file: no schema, exit 0" sh -c "! grep -q schema: '$TMP/version0' && grep -q '^slurm-exporter-shim, version' '$TMP/version0'"
printf '{"metrics": 1}' >"$TMP/broken.json"
refused "--version with a broken --mapping.file" "broken.json" "$SHIM_BIN" --version --mapping.file "$TMP/broken.json"

# ---- the daemon: the self metric on every schema's page, the status page
start_fake || bad "fake_slurmctld does not start"
# shellcheck disable=SC2086
BIND_SCHEMA=mixed-fidelity start_shim_with 100 --mapping.file "$LOAD" --mapping.file "$TMP/mixed-fidelity.json" $RIV ||
	bad "the shim does not start: $(head -3 "$TMP/shim.log")"
# metric_counts PATH: "stem exact approximate unavailable" per schema, from PATH's self metric
metric_counts() {
	curl -s --max-time 20 "http://127.0.0.1:$PORT$1" >"$TMP/page"
	python3 - "$TMP/page" <<'PY'
import re, sys
n = {}
for line in open(sys.argv[1]):
    m = re.match(r'slurm_exporter_shim_schema_rows\{schema="([^"]*)",fidelity="([a-z]*)"\} (\d+)$', line)
    if m:
        n.setdefault(m.group(1), {})[m.group(2)] = m.group(3)
for s, v in n.items():
    print(s, v.get("exact"), v.get("approximate"), v.get("unavailable"))
PY
}
cut -d' ' -f1-4 "$TMP/want" >"$TMP/want4"
for path in /metrics /schemas/slurm-node-load/metrics /schemas/mixed-fidelity/metrics; do
	metric_counts "$path" >"$TMP/got4"
	check "$path: slurm_exporter_shim_schema_rows of every schema, as python counts them" cmp -s "$TMP/want4" "$TMP/got4"
	cmp -s "$TMP/want4" "$TMP/got4" || diff "$TMP/want4" "$TMP/got4"
done
check "the self metric has its HELP and TYPE" grep -q '^# TYPE slurm_exporter_shim_schema_rows gauge$' "$TMP/page"
curl -s --max-time 20 "http://127.0.0.1:$PORT/" >"$TMP/status.html"
# schema_row STEM: the status page's row of the schema, tags stripped, cells separated by "|"
schema_row() { grep "^<tr><td><code>$1</code>" "$TMP/status.html" | sed 's|</td><td>|\||g; s|<[^>]*>||g'; }
while read -r stem e a u n; do
	row=$(schema_row "$stem")
	case $row in
	*"|$n|$e|$a|$u") ok "status page: $stem has $n rows, $e exact, $a approximate, $u unavailable" ;;
	*) bad "status page: $stem: want $n|$e|$a|$u, got '$row'" ;;
	esac
done <"$TMP/want"
check "status page: the first schema at /metrics and /schemas/prometheus-slurm-exporter/metrics, on the first listener" \
	sh -c "schema_row() { grep \"^<tr><td><code>\$1</code>\" '$TMP/status.html' | sed 's|</td><td>|\||g; s|<[^>]*>||g'; }; \
	schema_row prometheus-slurm-exporter | grep -q '|/metrics, /schemas/prometheus-slurm-exporter/metrics|127.0.0.1:$PORT|'"
check "status page: the bound listener serves mixed-fidelity" sh -c "grep '^<tr><td><code>mixed-fidelity<' '$TMP/status.html' | grep -q '127.0.0.1:$PORT2'"
check "status page: slurm-node-load has no listener of its own" sh -c "grep '^<tr><td><code>slurm-node-load<' '$TMP/status.html' | grep -q '<td>-</td>'"

# ---- --once prints what it always printed: no schema_rows family
"$SHIM_BIN" --once --replay-dir "$STATE" --mapping.file "$MAPPING" --mapping.file "$LOAD" >"$TMP/once" 2>/dev/null
check "--once: the legacy families, without slurm_exporter_shim_schema_rows" \
	sh -c "grep -q '^slurm_cpus_alloc ' '$TMP/once' && ! grep -q schema_rows '$TMP/once'"
finish
