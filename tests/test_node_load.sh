#!/bin/sh
# Slurm's allocation beside node_exporter in a real Prometheus (docs/dashboards.md): fake_slurmctld
# serves a captured state with slurmrestd (25.11 R2) whose node n3 is renamed "localhost" and given a
# load of 15.9 on its 8 allocated CPUs; the shim serves the legacy schema and slurm-node-load from one
# set of fetches; the real prometheus-node-exporter (Debian's) runs on 127.0.0.1 beside it; a real
# Prometheus scrapes /schemas/slurm-node-load/metrics and node_exporter with the one relabelling of
# docs/dashboards.md (node from the host part of the address: localhost:PORT -> node="localhost").
# Every target expression of docs/slurm-node-load-dashboard.json must then answer with at least one
# series, the joins on node must find the node on both sides, slurm_node_cpu_load must be 15.9 and the
# alert's expression must pick that node and no other. 127.0.0.1 only. The last line is "N passed, M failed".
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
PASS=0
FAIL=0
SHIM_BIN=${SHIM_BIN:-./slurm-exporter-shim}
FAKE_SLURMCTLD=${FAKE_SLURMCTLD:-build/tests/fake_slurmctld}
NODE_EXPORTER=${NODE_EXPORTER:-prometheus-node-exporter}
PROMETHEUS=${PROMETHEUS:-prometheus}
for b in "$NODE_EXPORTER" "$PROMETHEUS"; do
	command -v "$b" >/dev/null || { echo "test_node_load: $b missing (scripts/install-deps.sh test)"; bad "$b installed"; finish; }
done
TMP=$(mktemp -d)
MAPPING=mappings/prometheus-slurm-exporter.json
MIN_INTERVAL=1
FAKE_PID= SHIM_PID= NE_PID= PROM_PID=
cleanup() { killwait "$PROM_PID" "$NE_PID" "$SHIM_PID" "$FAKE_PID"; rm -rf "$TMP"; }
trap cleanup EXIT

# the state: 25.11 R2, n3 renamed localhost (node_exporter's relabelled name) with a load of 15.9
STATE=$TMP/state
cp -r tests/fixtures/slurm-25.11-rest/R2-busy-mix-draining "$STATE"
python3 - "$STATE/rest_nodes.json" <<'PY'
import json, sys
p = sys.argv[1]
d = json.load(open(p))
for n in d["nodes"]:
    if n["name"] == "n3":
        n["name"] = "localhost"
        n["cpu_load"] = 1590
json.dump(d, open(p, "w"))
PY

start_fake || { bad "fake_slurmctld starts"; finish; }
start_shim_with 100 --mapping.file mappings/slurm-node-load.json --slurmrestd.url "http://127.0.0.1:$FAKE_PORT" \
	--slurmrestd.min-interval 1 || { bad "the shim starts: $(head -3 "$TMP/shim.log")"; finish; }
SHIM_PORT=$PORT

# node_exporter: its load, CPU and memory collectors only, on a free loopback port
for _ in 1 2 3 4 5; do
	NE_PORT=$(rand_port)
	"$NODE_EXPORTER" --web.listen-address "127.0.0.1:$NE_PORT" --collector.disable-defaults --collector.loadavg \
		--collector.cpu --collector.meminfo >"$TMP/ne.log" 2>&1 &
	NE_PID=$!
	i=0
	while [ $i -lt 50 ] && ! curl -s "http://127.0.0.1:$NE_PORT/metrics" 2>/dev/null | grep -q '^node_load1 '; do
		kill -0 "$NE_PID" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	kill -0 "$NE_PID" 2>/dev/null && break
	wait "$NE_PID" 2>/dev/null
	NE_PID=
done
check "node_exporter serves node_load1 on 127.0.0.1:${NE_PORT:-?}" sh -c "curl -s 'http://127.0.0.1:$NE_PORT/metrics' | grep -q '^node_load1 '"

# Prometheus: the two jobs of docs/dashboards.md (node_exporter's target named localhost)
cat >"$TMP/prom.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: slurm-node-load
    metrics_path: /schemas/slurm-node-load/metrics
    static_configs:
      - targets: ['127.0.0.1:$SHIM_PORT']
  - job_name: node
    static_configs:
      - targets: ['localhost:$NE_PORT']
    relabel_configs:
      - source_labels: [__address__]
        regex: '([^.:]+).*'
        target_label: node
YML
for _ in 1 2 3 4 5; do
	PROM_PORT=$(rand_port)
	"$PROMETHEUS" --config.file="$TMP/prom.yml" --storage.tsdb.path="$TMP/data" --web.listen-address="127.0.0.1:$PROM_PORT" \
		>"$TMP/prom.log" 2>&1 &
	PROM_PID=$!
	i=0
	while [ $i -lt 100 ] && ! curl -s "http://127.0.0.1:$PROM_PORT/-/ready" 2>/dev/null | grep -qi ready; do
		kill -0 "$PROM_PID" 2>/dev/null || break
		sleep 0.2
		i=$((i + 1))
	done
	kill -0 "$PROM_PID" 2>/dev/null && break
	wait "$PROM_PID" 2>/dev/null
	PROM_PID=
done
[ -n "$PROM_PID" ] || { bad "Prometheus starts: $(tail -3 "$TMP/prom.log")"; finish; }

# query EXPR: Prometheus' JSON answer
query() { curl -s --max-time 10 "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1"; }
# enough samples for rate(): wait until node_exporter's CPU counters have 5 samples
i=0
while [ $i -lt 60 ] && ! query 'count_over_time(node_cpu_seconds_total{mode="idle"}[1m]) >= 5' | grep -q '"node":"localhost"'; do
	sleep 1
	i=$((i + 1))
done

python3 - "$PROM_PORT" docs/slurm-node-load-dashboard.json <<'PY' >"$TMP/check.txt"
import json, sys, urllib.parse, urllib.request
port, dash = sys.argv[1], json.load(open(sys.argv[2]))
def q(expr):
    url = "http://127.0.0.1:%s/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": expr}))
    return json.load(urllib.request.urlopen(url, timeout=10))
def series(expr):
    a = q(expr)
    return a["data"]["result"] if a.get("status") == "success" else None
exprs = [(p["title"], t["expr"]) for p in dash["panels"] for t in p["targets"]]
for title, e in exprs:
    e2 = e.replace("$node", ".*").replace("$__rate_interval", "1m")
    r = series(e2)
    nodes = sorted({s["metric"].get("node", "") for s in r}) if r is not None else None
    print(("ok  " if r else "FAIL") + " dashboard %s: %s -> %s" % (title, e2, "error" if r is None else nodes))
def one(expr, want_node="localhost"):
    r = series(expr) or []
    return {s["metric"].get("node"): float(s["value"][1]) for s in r}
v = one('slurm_node_cpu_load')
print(("ok  " if abs(v.get("localhost", -1) - 15.9) < 1e-9 else "FAIL") + " slurm_node_cpu_load{node=localhost} 15.9: %s" % v)
j = one('node_load1 - on (node) slurm_node_cpus_allocated')
print(("ok  " if list(j) == ["localhost"] else "FAIL") + " node_load1 joined on node with Slurm's allocation: %s" % j)
rules = open("docs/alert-rules.yml").read()
alert = [l.split("expr: ", 1)[1] for l in rules.splitlines() if "slurm_node_cpu_load_excess" in l and "expr: " in l][0]
a = one(alert)
print(("ok  " if list(a) == ["localhost"] else "FAIL") + " the alert's expression picks the loaded node only: %s" % a)
PY
while IFS= read -r line; do
	case $line in
	"ok  "*) ok "${line#ok  }" ;;
	*) bad "${line#FAIL}" ;;
	esac
done <"$TMP/check.txt"
[ -s "$TMP/check.txt" ] || bad "no check ran"
finish
