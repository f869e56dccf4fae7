#!/bin/sh
# The peers' schemas in a real Prometheus (/usr/bin/prometheus, started here on 127.0.0.1 with
# random ports, never a service), as tests/test_prometheus.sh does for #4323 and the legacy table.
#
# 1. SckyzO's ten Grafana dashboards (their queries: tests/fixtures/dashboards/sckyzo-v1.8.4-queries.json,
#    made by tests/dashboard-queries.py): for every state tests/fixtures/peers-25.11/P*, Prometheus A
#    scrapes a static file server serving SckyzO's own output for the state
#    (sckyzo_exporter_metrics.txt) and Prometheus B scrapes the shim serving the same state with
#    mappings/sckyzo-slurm-exporter.json (fake_slurmctld serving the state's native endpoints and
#    slurmrestd answers); tests/prom_peers.py then evaluates every query on both: equal wherever
#    every family the query reads is an exact row (fidelity read from the mapping, with slurmrestd
#    given), else the difference is printed with the row's fidelity, not failed; queries reading a
#    family that is unavailable, no row, or that SckyzO never prints on any state are listed as such.
#    All states run at once (two Prometheus servers each), then the queries.
# 2. --mapping.to-rules for both peers' tables: the export says which rows it cannot express (no
#    native form: they need slurmrestd) and has a rule for every other one (prom_peers.py
#    export-check); then tests/test_prometheus.sh --direct on one state each: promtool check rules
#    and check config on the export, Prometheus scraping a fake slurmctld directly with the
#    exported scrape-direct.yml evaluates the rules, and every recorded series equals the shim's
#    own --once output (no slurmrestd) for the state. These two runs go in the background while the
#    dashboards run (both mostly wait for scrapes).
# Usage (from the repository root; `make test` sets SHIM_BIN and FAKE_SLURMCTLD):
#   tests/test_prometheus_peers.sh [-v] [--state DIR]...
# Last line: "N passed, M failed"; exit status non-zero on any failure.
SHIM=${SHIM_BIN:-./slurm-exporter-shim}
FAKE=${FAKE_SLURMCTLD:-build/tests/fake_slurmctld}
PROMETHEUS=${PROMETHEUS:-/usr/bin/prometheus}
PROMTOOL=${PROMTOOL:-/usr/bin/promtool}
SCKYZO=mappings/sckyzo-slurm-exporter.json
RIVOSINC=mappings/rivosinc-slurm-exporter.json
FIXTURE=tests/fixtures/dashboards/sckyzo-v1.8.4-queries.json
PEERS=tests/fixtures/peers-25.11
HELPER="python3 tests/prom_check.py"
STATES=""
VERBOSE=""
while [ $# -gt 0 ]; do
	case $1 in
	-v | --verbose) VERBOSE=--verbose ;;
	--state) STATES="$STATES ${2%/}"; shift ;;
	*) echo "usage: $0 [-v] [--state DIR]..." >&2; exit 2 ;;
	esac
	shift
done
cd "$(dirname "$0")/.." || exit 1
GIVEN=$STATES
[ -n "$STATES" ] || STATES=$(for d in "$PEERS"/P*/; do echo "${d%/}"; done)
t0=$(date +%s)

pass=0
fail=0
ok() { pass=$((pass + 1)); [ -z "$VERBOSE" ] || echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
finish() { echo "test_prometheus_peers: $(($(date +%s) - t0)) s"; echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit $?; }
# add_counts FILE: add the "N passed, M failed" last line of a helper's output
add_counts() {
	last=$(tail -n 1 "$1")
	case $last in
	*" passed, "*" failed")
		p=${last%% passed*}
		f=${last#*passed, }
		pass=$((pass + p))
		fail=$((fail + ${f%% failed}))
		;;
	*) bad "$2 did not finish: $last" ;;
	esac
}

for f in "$SHIM" "$FAKE"; do
	[ -x "$f" ] || { bad "missing $f (build first: make, or set SHIM_BIN / FAKE_SLURMCTLD)"; finish; }
done
if [ ! -x "$PROMETHEUS" ] || [ ! -x "$PROMTOOL" ]; then
	# tests/test_prometheus.sh installs it (or says why it is skipped)
	echo "SKIP test_prometheus_peers: $PROMETHEUS or $PROMTOOL missing (tests/test_prometheus.sh installs it)" >&2
	finish
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/test_prometheus_peers.XXXXXX") || exit 1
PIDS=""
alive() { [ -e "/proc/$1" ] && ! grep -q ') Z ' "/proc/$1/stat" 2>/dev/null; }
stop_all() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do
		i=0
		while alive "$p" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
		alive "$p" && kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	PIDS=""
}
trap 'stop_all; rm -rf "$T"' EXIT
trap 'exit 130' INT TERM HUP
start_bg() {
	log=$1
	shift
	"$@" >"$log" 2>&1 &
	PIDS="$PIDS $!"
}
show_log() { echo "       --- $1 (last lines)"; tail -n 5 "$1" 2>/dev/null | sed 's/^/       /'; }
wait_file() { i=0; while [ ! -s "$1" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done; [ -s "$1" ]; }

# launch_prom NAME TARGET PATH: a Prometheus scraping http://TARGET/PATH every second as job
# slurm_exporter (the job SckyzO's dashboards name), on a free port; $T/NAME.{port,pid}
launch_prom() {
	cat >"$T/$1.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: slurm_exporter
    metrics_path: $3
    static_configs:
      - targets: ["$2"]
EOF
	next_port >"$T/$1.port"
	start_bg "$T/$1.log" "$PROMETHEUS" --config.file="$T/$1.yml" --storage.tsdb.path="$T/data-$1" \
		--web.listen-address="127.0.0.1:$(cat "$T/$1.port")"
	echo "${PIDS##* }" >"$T/$1.pid"
	echo "$2 $3" >"$T/$1.args"
}
# launch_shim STATE: the shim with SckyzO's table against the state's fake slurmctld (as slurmctld and
# as slurmrestd), on a free port; $T/shim-STATE.{port,pid}
launch_shim() {
	fk=$(cat "$T/fake-$1.port")
	next_port >"$T/shim-$1.port"
	start_bg "$T/shim-$1.log" "$SHIM" --mapping.file "$SCKYZO" --slurmctld.url "http://127.0.0.1:$fk" \
		--slurmrestd.url "http://127.0.0.1:$fk" --slurmrestd.jobs --web.listen-address "127.0.0.1:$(cat "$T/shim-$1.port")"
	echo "${PIDS##* }" >"$T/shim-$1.pid"
}
# next_port: a free port from a pool taken at once (one Python start for all); a new one when it is used up
next_port() {
	[ -s "$T/ports" ] || $HELPER ports 24 | tr ' ' '\n' >"$T/ports"
	head -n 1 "$T/ports"
	sed -i 1d "$T/ports"
}
# wait_all KIND NAME...: wait for the shims (KIND shim) or the Prometheus servers (KIND prom) NAME
# at once; one started again on another port when its port was taken (up to 3 times); prints the
# names that never got ready
wait_all() {
	kind=$1
	shift
	todo="$*"
	for _ in 1 2 3; do
		[ -n "$todo" ] || return 0
		args=""
		for n in $todo; do
			if [ "$kind" = shim ]; then
				args="$args $n=http://127.0.0.1:$(cat "$T/shim-$n.port")/metrics,$(cat "$T/shim-$n.pid")"
			else
				args="$args $n=http://127.0.0.1:$(cat "$T/$n.port"),$(cat "$T/$n.pid"),$T/data-$n"
			fi
		done
		# shellcheck disable=SC2086
		python3 tests/prom_peers.py wait-all 90 $args >"$T/wait.out"
		todo=""
		while read -r n why; do
			[ "$why" = died ] || { echo "$n"; continue; }
			todo="$todo $n"
			# shellcheck disable=SC2046 # TARGET and PATH, two words
			if [ "$kind" = shim ]; then launch_shim "$n"; else launch_prom "$n" $(cat "$T/$n.args"); fi
		done <"$T/wait.out"
	done
	for n in $todo; do echo "$n"; done
}

# ---- the recording rules of both peers' tables (2. above) ---------------------------------------
# the state of each schema's run: P2 (drained and down nodes with reasons) for SckyzO's, P4 (licences,
# GPUs) for rivosinc's; with --state, the first state given for both
RULES_SCKYZO=$PEERS/P2-node-trouble
RULES_RIVOSINC=$PEERS/P4-licenses-gpu-full
if [ -n "$GIVEN" ]; then
	RULES_SCKYZO=$(echo $GIVEN | cut -d' ' -f1)
	RULES_RIVOSINC=$RULES_SCKYZO
fi
for pair in "$SCKYZO:$RULES_SCKYZO" "$RIVOSINC:$RULES_RIVOSINC"; do
	map=${pair%%:*}
	state=${pair#*:}
	stem=$(basename "$map" .json)
	if "$SHIM" --mapping.file "$map" --slurmctld.url http://127.0.0.1:6817 --mapping.to-rules "$T/export-$stem" >"$T/out" 2>&1; then
		python3 tests/prom_peers.py export-check "$map" "$T/export-$stem/rules.yml" >"$T/export-check.txt" 2>&1
		grep -v '^ok' "$T/export-check.txt" | sed '$d'
		add_counts "$T/export-check.txt" "prom_peers.py export-check $stem"
	else
		bad "--mapping.to-rules $map: $(cat "$T/out")"
	fi
	# in the background, while the dashboards run (mostly waiting for scrapes)
	sh tests/test_prometheus.sh $VERBOSE --direct --no-dashboards --mapping "$map" --state "$state" >"$T/rules-$stem.txt" 2>&1 &
	PIDS="$PIDS $!"
	echo "$stem $!" >>"$T/rules-runs"
done

# ---- SckyzO's dashboards on SckyzO's output and on the shim's, per state (1. above) -------------
if [ -s "$FIXTURE" ]; then
	ok "the queries of SckyzO's dashboards: $FIXTURE"
else
	bad "missing $FIXTURE"
	finish
fi
# the static file server for the peers' outputs (Python's, bound to 127.0.0.1)
for _ in 1 2 3; do
	FP=$(next_port)
	start_bg "$T/files.log" python3 -m http.server --bind 127.0.0.1 --directory "$PEERS" "$FP"
	$HELPER wait-http "http://127.0.0.1:$FP/README.md" 20 "${PIDS##* }"
	rc=$?
	[ $rc -eq 2 ] || break
done
[ "$rc" -eq 0 ] || { bad "the file server did not start"; show_log "$T/files.log"; finish; }

SPECS=""
# every process of every state started at once, then waited for (most of the time is waiting)
: >"$T/fakes"
for dir in $STATES; do
	s=$(basename "$dir")
	case $dir in "$PEERS"/*) ;; *) bad "$s: a state must be under $PEERS (the file server serves that folder)"; continue ;; esac
	start_bg "$T/fake-$s.log" "$FAKE" --port 0 --port-file "$T/fake-$s.port" --dir "$dir"
	echo "$s" >>"$T/fakes"
done
shims=""
for s in $(cat "$T/fakes"); do
	wait_file "$T/fake-$s.port" || { bad "$s: fake_slurmctld did not start"; show_log "$T/fake-$s.log"; continue; }
	launch_shim "$s"
	shims="$shims $s"
done
# shellcheck disable=SC2086
wait_all shim $shims >"$T/not-ready"
proms=""
for s in $shims; do
	if grep -qx "$s" "$T/not-ready"; then
		bad "$s: the shim did not start"
		show_log "$T/shim-$s.log"
		continue
	fi
	launch_prom "peer-$s" "127.0.0.1:$FP" "/$s/sckyzo_exporter_metrics.txt"
	launch_prom "shim-$s" "127.0.0.1:$(cat "$T/shim-$s.port")" /metrics
	proms="$proms $s"
done
# shellcheck disable=SC2046 # a word per name
wait_all prom $(for s in $proms; do echo "peer-$s shim-$s"; done) >"$T/not-ready"
for s in $proms; do
	if grep -qx "peer-$s\|shim-$s" "$T/not-ready"; then
		bad "$s: Prometheus did not start"
		show_log "$T/peer-$s.log"
		show_log "$T/shim-$s.log"
	else
		SPECS="$SPECS $s=http://127.0.0.1:$(cat "$T/peer-$s.port"),http://127.0.0.1:$(cat "$T/shim-$s.port")"
	fi
done
if [ -n "$SPECS" ]; then
	# shellcheck disable=SC2086
	python3 tests/prom_peers.py compare $VERBOSE --fixture "$FIXTURE" --mapping "$SCKYZO" \
		--peer-outputs "$PEERS/P*/sckyzo_exporter_metrics.txt" $SPECS >"$T/compare.txt" 2>&1
	sed '$d' "$T/compare.txt"
	add_counts "$T/compare.txt" "prom_peers.py compare"
fi
echo "test_prometheus_peers: dashboards: $(($(date +%s) - t0)) s"

while read -r stem pid; do
	wait "$pid"
	sed "\$d; s/^/[$stem] /" "$T/rules-$stem.txt"
	add_counts "$T/rules-$stem.txt" "tests/test_prometheus.sh --direct ($stem)"
done <"$T/rules-runs"
finish
