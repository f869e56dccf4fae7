#!/bin/sh
# Several schemas from one process (--mapping.file repeated): the first at /metrics, every one at
# /schemas/<name>/metrics, all from one set of fetches. Against fake_slurmctld (slurmctld and
# slurmrestd of a captured state), its per-endpoint request counts (/_stats) prove that a second and
# third schema add no request, that the fetches are the union of what the schemas scraped read, and
# that the first schema's answer is the one a single --mapping.file gives. Also: a listener bound to
# a schema (--web.listen-address ADDR=NAME), SIGHUP reloading every file, the refusals (two files of
# one name, a name unsafe in a URL path, an unknown schema named), --once.schema and --check-mapping
# with several files. 127.0.0.1 only. The last line is "N passed, M failed".
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
fake_test schemas
STATE=tests/fixtures/slurm-25.11-rest/R2-busy-mix-draining
LOAD=mappings/slurm-node-load.json
MIN_INTERVAL=600
cp "$MAPPING" "$TMP/legacy-copy.json"

# the fake's request counts of the data endpoints, one "name count" a line
stats() { curl -s --max-time 5 "http://127.0.0.1:$FAKE_PORT/_stats" | grep -v '^openapi\|^index\|^health' ; }
# get PATH: the body of the shim's PATH, self metrics left out (they time the scrape)
get() { curl -s --max-time 20 "http://127.0.0.1:$PORT$1" | grep -v 'slurm_exporter_shim_'; }
# a fresh fake (counts 0) and the shim with FLAGS against it
run() {
	killwait "$SHIM_PID" "$FAKE_PID"
	SHIM_PID= FAKE_PID=
	start_fake || { bad "fake_slurmctld does not start"; return 1; }
	start_shim_with 100 --slurmrestd.url "http://127.0.0.1:$FAKE_PORT" --slurmrestd.min-interval "$MIN_INTERVAL" "$@" ||
		{ bad "the shim does not start: $(head -3 "$TMP/shim.log")"; return 1; }
}

# ---- one schema: the reference counts and answer
run && get /metrics >"$TMP/one.txt" && stats >"$TMP/one.stats"
check "one schema: /metrics serves the legacy families" grep -q '^slurm_cpus_alloc 43$' "$TMP/one.txt"
check "one schema: nodes fetched once from slurmctld and slurmrestd" \
	sh -c "grep -q '^nodes 1$' '$TMP/one.stats' && grep -q '^rest_nodes 1$' '$TMP/one.stats'"

# ---- three schemas, every path scraped: the same requests, the first schema's answer unchanged
run --mapping.file "$LOAD" --mapping.file "$TMP/legacy-copy.json"
get /metrics >"$TMP/three.txt"
get /schemas/slurm-node-load/metrics >"$TMP/load.txt"
get /schemas/legacy-copy/metrics >"$TMP/copy.txt"
get /schemas/prometheus-slurm-exporter/metrics >"$TMP/first.txt"
stats >"$TMP/three.stats"
check "three schemas, four paths scraped: the requests of one schema" cmp -s "$TMP/one.stats" "$TMP/three.stats"
[ -s "$TMP/one.stats" ] && ! cmp -s "$TMP/one.stats" "$TMP/three.stats" && diff "$TMP/one.stats" "$TMP/three.stats" | sed 's/^/     /'
check "three schemas: /metrics is the first schema's answer, as with one" cmp -s "$TMP/one.txt" "$TMP/three.txt"
check "three schemas: /schemas/<first>/metrics is it too" cmp -s "$TMP/one.txt" "$TMP/first.txt"
check "three schemas: a copy of the first serves the same" cmp -s "$TMP/one.txt" "$TMP/copy.txt"
check "three schemas: /schemas/slurm-node-load/metrics serves the load (n3: cpu_load 320)" \
	grep -q '^slurm_node_cpu_load{node="n3"} 3.2$' "$TMP/load.txt"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/schemas/nothing/metrics")
check "an unknown schema's path: 404 ($code)" [ "$code" = 404 ]

# ---- the union: the load schema first reads only slurmctld's and slurmrestd's nodes; scraping the
# legacy schema then fetches what it reads beyond them, each once
MAPPING=$LOAD run --mapping.file "$TMP/legacy-copy.json"
get /metrics >/dev/null
stats >"$TMP/load.stats"
check "the load schema first, /metrics: nodes from slurmctld and slurmrestd only" \
	sh -c "grep -q '^nodes 1$' '$TMP/load.stats' && grep -q '^rest_nodes 1$' '$TMP/load.stats' &&
	       [ \$(awk '{ s += \$2 } END { print s }' '$TMP/load.stats') -eq 2 ]"
get /schemas/legacy-copy/metrics >"$TMP/copy2.txt"
stats >"$TMP/union.stats"
check "then the legacy schema: the requests of the legacy schema alone (nodes not fetched again)" \
	cmp -s "$TMP/one.stats" "$TMP/union.stats"
check "then the legacy schema: its answer as with one schema" cmp -s "$TMP/one.txt" "$TMP/copy2.txt"

# ---- SIGHUP reloads every file
sed 's/"help": "Allocated CPUs"/"help": "Allocated CPUs, reloaded"/' "$MAPPING" >"$TMP/legacy-copy.json"
kill -HUP "$SHIM_PID"
i=0
while [ $i -lt 50 ] && ! grep -q "mapping reloaded from $TMP/legacy-copy.json" "$TMP/shim.log"; do sleep 0.1; i=$((i + 1)); done
check "SIGHUP: every file reloaded (logged per file)" \
	sh -c "grep -q 'mapping reloaded from $LOAD' '$TMP/shim.log' && grep -q 'mapping reloaded from $TMP/legacy-copy.json' '$TMP/shim.log'"
check "SIGHUP: the second schema serves its new table" \
	sh -c "curl -s 'http://127.0.0.1:$PORT/schemas/legacy-copy/metrics' | grep -q '^# HELP slurm_cpus_alloc Allocated CPUs, reloaded$'"
for p in /schemas/legacy-copy/metrics /schemas/slurm-node-load/metrics /metrics; do curl -s -o /dev/null "http://127.0.0.1:$PORT$p"; done
check "SIGHUP: the schemas' paths still served (their names outlive the reloaded tables; no sanitizer report)" \
	sh -c "curl -s 'http://127.0.0.1:$PORT/schemas/slurm-node-load/metrics' | grep -q '^slurm_node_cpu_load{node=\"n3\"} 3.2$' &&
	       ! grep -q 'Sanitizer\|runtime error' '$TMP/shim.log'"
cp "$MAPPING" "$TMP/legacy-copy.json"

# ---- a listener bound to a schema
killwait "$SHIM_PID"
SHIM_PID=
BIND_SCHEMA=slurm-node-load run --mapping.file "$LOAD"
check "ADDR=NAME: the first listener's /metrics serves the first schema" \
	sh -c "curl -s 'http://127.0.0.1:$PORT/metrics' | grep -q '^slurm_cpus_alloc 43$'"
check "ADDR=NAME: the bound listener's /metrics serves slurm-node-load" \
	sh -c "curl -s 'http://127.0.0.1:$PORT2/metrics' | grep -q '^slurm_node_cpu_load{node=\"n3\"} 3.2$'"
check "ADDR=NAME: the bound listener serves /schemas/ paths too" \
	sh -c "curl -s 'http://127.0.0.1:$PORT2/schemas/prometheus-slurm-exporter/metrics' | grep -q '^slurm_cpus_alloc 43$'"
killwait "$SHIM_PID"
SHIM_PID=

# ---- refusals and the one-shot modes
refused "ADDR=NAME naming no schema" 'no --mapping.file is named .*nope' \
	"$SHIM_BIN" --replay-dir "$STATE" --mapping.file "$MAPPING" --web.listen-address "127.0.0.1:0=nope"
cp "$LOAD" "$TMP/bad name.json"
refused "a file name unsafe in a URL path" 'may hold only' \
	"$SHIM_BIN" --once --replay-dir "$STATE" --mapping.file "$MAPPING" --mapping.file "$TMP/bad name.json"
refused "--once.schema naming no schema" 'no --mapping.file is named .*nope' \
	"$SHIM_BIN" --once --once.schema nope --replay-dir "$STATE" --mapping.file "$MAPPING"
"$SHIM_BIN" --once --replay-dir "$STATE" --slurmrestd.url http://replay.invalid --mapping.file "$MAPPING" \
	--mapping.file "$LOAD" --once.schema slurm-node-load >"$TMP/once.txt" 2>"$TMP/once.err"
check "--once.schema slurm-node-load prints that schema" grep -q '^slurm_node_cpu_load{node="n3"} 3.2$' "$TMP/once.txt"
"$SHIM_BIN" --once --replay-dir "$STATE" --slurmrestd.url http://replay.invalid --mapping.file "$MAPPING" \
	--mapping.file "$LOAD" >"$TMP/once1.txt" 2>&1
check "--once with several files prints the first" \
	sh -c "grep -q '^slurm_cpus_alloc 43$' '$TMP/once1.txt' && ! grep -q '^slurm_node_cpu_load' '$TMP/once1.txt'"
"$SHIM_BIN" --check-mapping "$MAPPING" --check-mapping "$LOAD" >"$TMP/check.txt" 2>&1
check "--check-mapping twice: both files checked" \
	sh -c "grep -q 'prometheus-slurm-exporter.json: OK' '$TMP/check.txt' && grep -q 'slurm-node-load.json: OK, 7 rows (7 exact' '$TMP/check.txt'"
refused "--check-mapping of two files of one name" 'the same name' \
	"$SHIM_BIN" --check-mapping "$LOAD" --check-mapping "$LOAD"
"$SHIM_BIN" --mapping.file "$MAPPING" --mapping.file "$LOAD" --mapping.to-rules "$TMP/rules" >/dev/null 2>&1
check "--mapping.to-rules: the first schema's files in DIR, the others' in DIR/<name>" \
	sh -c "[ -s '$TMP/rules/rules.yml' ] && grep -q 'slurm_node_cpu_load' '$TMP/rules/slurm-node-load/rules.yml'"
finish
