#!/bin/sh
# The peers' schemas through the daemon, against fake_slurmctld serving a peers-25.11 state
# (slurmctld's endpoints and slurmrestd's answers): the rivosinc table as a second schema, its own
# listener bound to it (--web.listen-address ADDR=rivosinc-slurm-exporter, as on rivosinc's :9092),
# serves at that listener's /metrics every series rivosinc printed for its exact rows; slurmrestd's
# /licenses is fetched only while a loaded table reads it (the legacy table alone: never), /reservations
# only with the SckyzO table, /slurmdb/'s /associations only with the rivosinc table; the SckyzO
# table first (its names at /metrics, as on SckyzO's :9341), every exact row equal to SckyzO's output
# series for series; then, on every other captured state, both tables from one process, every exact
# row equal to each peer's output series for series (where a form's note says "the last bit of a sum
# may differ", within a relative 1e-12, as test_peers.c). The states were captured in UTC, where sinfo
# printed the reasons' times: the shim runs in UTC too. 127.0.0.1 only. The last line is "N passed, M
# failed".
set -u
cd "$(dirname "$0")/.." || exit 1
TZ=UTC
export TZ
. tests/lib.sh
fake_test peers
STATE=tests/fixtures/peers-25.11/P1-busy-mix
RIVOSINC=mappings/rivosinc-slurm-exporter.json
SCKYZO=mappings/sckyzo-slurm-exporter.json
MIN_INTERVAL=600

stats() { curl -s --max-time 5 "http://127.0.0.1:$FAKE_PORT/_stats"; }
run() {
	killwait "$SHIM_PID" "$FAKE_PID"
	SHIM_PID= FAKE_PID=
	start_fake || { bad "fake_slurmctld does not start"; return 1; }
	start_shim_with 100 --slurmrestd.url "http://127.0.0.1:$FAKE_PORT" --slurmrestd.jobs \
		--slurmrestd.min-interval "$MIN_INTERVAL" "$@" ||
		{ bad "the shim does not start: $(head -3 "$TMP/shim.log")"; return 1; }
}

# ---- the legacy table alone reads no license: /licenses never asked
run && curl -s --max-time 20 "$URL" >/dev/null && stats >"$TMP/one.stats"
check "the legacy table alone: slurmrestd's /licenses not fetched" grep -q '^rest_licenses 0$' "$TMP/one.stats"
check "the legacy table alone: slurmrestd's /reservations not fetched" grep -q '^rest_reservations 0$' "$TMP/one.stats"
check "the legacy table alone: slurmrestd's /associations not fetched" grep -q '^rest_associations 0$' "$TMP/one.stats"
check "the legacy table alone: slurmrestd's /nodes fetched" grep -q '^rest_nodes 1$' "$TMP/one.stats"

# ---- the rivosinc table as a second schema, on a listener of its own
BIND_SCHEMA=rivosinc-slurm-exporter run --mapping.file "$RIVOSINC"
curl -s --max-time 20 "http://127.0.0.1:$PORT2/metrics" >"$TMP/bound.txt"
curl -s --max-time 20 "http://127.0.0.1:$PORT/schemas/rivosinc-slurm-exporter/metrics" >"$TMP/path.txt"
curl -s --max-time 20 "$URL" >"$TMP/legacy.txt"
stats >"$TMP/two.stats"
check "rivosinc's schema: /licenses fetched once" grep -q '^rest_licenses 1$' "$TMP/two.stats"
check "rivosinc's schema: /associations fetched once" grep -q '^rest_associations 1$' "$TMP/two.stats"
# no other endpoint more often than for the legacy table alone (fewer: the legacy scrape came second, when
# slurmrestd's documents were known to be usable, and fetched no job walk for a fallback)
check "rivosinc's schema adds no other request (no /reservations)" awk 'NR == FNR { one[$1] = $2; next }
	$1 != "rest_licenses" && $1 != "rest_associations" && $2 > one[$1] + 0 { bad = 1 } END { exit bad }' \
	"$TMP/one.stats" "$TMP/two.stats"
check "the bound listener serves rivosinc's names at /metrics" grep -q '^slurm_lic_total{name="matlab"} 10$' "$TMP/bound.txt"
check "the first listener's /metrics is still the legacy table" sh -c "grep -q '^slurm_cpus_total ' '$TMP/legacy.txt' && ! grep -q '^slurm_lic_total' '$TMP/legacy.txt'"
# the same series, and the same values but those of the rows timing the scrape (their notes say
# "Timings are not compared:"): the two answers come from two scrapes
same_answer() {
	python3 - "$RIVOSINC" "$1" "$2" <<'PY'
import json, re, sys
timed = {r["name"] for r in json.load(open(sys.argv[1]))["metrics"]
         if any("Timings are not compared:" in (f.get("note") or "") for f in [r] + r.get("prefer", []))}
def series(path):
    out = {}
    for line in open(path):
        if line.startswith(("#", "slurm_exporter_shim_")) or not line.strip():
            continue
        key, value = line.rsplit(" ", 1)
        out[key] = None if re.match(r"[^{ ]+", key).group(0) in timed else value
    return out
a, b = series(sys.argv[2]), series(sys.argv[3])
sys.exit(0 if a == b and timed else 1)
PY
}
check "/schemas/rivosinc-slurm-exporter/metrics serves the same series (values too, but the scrape timings')" \
	same_answer "$TMP/bound.txt" "$TMP/path.txt"

# every exact row's family: the same series as the peer printed (tests/peer_compare.py: an empty label
# value is no label; a row whose note says the last bit of a sum may differ, within 1e-12 relative)
compare() { python3 tests/peer_compare.py "$@"; }
compare "$RIVOSINC" "$STATE/rivosinc_exporter_metrics.txt" "$TMP/bound.txt" >"$TMP/cmp.txt" 2>&1
check "every exact row equals rivosinc's series ($(tail -1 "$TMP/cmp.txt"))" grep -q ' 0 differ$' "$TMP/cmp.txt"
grep '^differs' "$TMP/cmp.txt" | head -5 | sed 's/^/     /'

# ---- the SckyzO table first, on the first listener (as on SckyzO's :9341), the legacy table bound to
# a second one
LEGACY=$MAPPING
MAPPING=$SCKYZO # start_shim_with gives $MAPPING as the first --mapping.file
BIND_SCHEMA=prometheus-slurm-exporter run --mapping.file "$LEGACY"
MAPPING=$LEGACY
curl -s --max-time 20 "$URL" >"$TMP/sckyzo.txt"
curl -s --max-time 20 "http://127.0.0.1:$PORT2/metrics" >"$TMP/legacy3.txt"
stats >"$TMP/three.stats"
check "SckyzO's schema at the first listener's /metrics" grep -q '^slurm_license_total{license="matlab"} 10$' "$TMP/sckyzo.txt"
check "the legacy table at the bound listener" sh -c "grep -q '^slurm_queue_pending 4$' '$TMP/legacy3.txt' && ! grep -q '^slurm_license_total' '$TMP/legacy3.txt'"
check "SckyzO's schema: /reservations fetched once" grep -q '^rest_reservations 1$' "$TMP/three.stats"
check "SckyzO's schema adds no request but /licenses and /reservations (no /associations)" sh -c "grep -v '^rest_licenses\\|^rest_reservations' '$TMP/one.stats' >'$TMP/e'; grep -v '^rest_licenses\\|^rest_reservations' '$TMP/three.stats' >'$TMP/f'; cmp -s '$TMP/e' '$TMP/f'"
compare "$SCKYZO" "$STATE/sckyzo_exporter_metrics.txt" "$TMP/sckyzo.txt" >"$TMP/cmp2.txt" 2>&1
check "every exact row equals SckyzO's series ($(tail -1 "$TMP/cmp2.txt"))" grep -q ' 0 differ$' "$TMP/cmp2.txt"
grep '^differs' "$TMP/cmp2.txt" | head -5 | sed 's/^/     /'

# ---- the other captured states: both schemas from one process (SckyzO's first, rivosinc's bound)
for STATE in tests/fixtures/peers-25.11/P[2-9]*/; do
	STATE=${STATE%/}
	S=${STATE##*/}
	MAPPING=$SCKYZO
	killwait "$SHIM_PID" "$FAKE_PID"
	SHIM_PID= FAKE_PID=
	start_fake && BIND_SCHEMA=rivosinc-slurm-exporter start_shim_with 100 \
		--slurmrestd.url "http://127.0.0.1:$FAKE_PORT" --slurmrestd.jobs --slurmrestd.min-interval "$MIN_INTERVAL" \
		--mapping.file "$RIVOSINC"
	MAPPING=$LEGACY
	[ -n "$SHIM_PID" ] || bad "$S: the shim does not start: $(head -3 "$TMP/shim.log")"
	curl -s --max-time 20 "$URL" >"$TMP/s.txt"
	curl -s --max-time 20 "http://127.0.0.1:$PORT2/metrics" >"$TMP/r.txt"
	compare "$SCKYZO" "$STATE/sckyzo_exporter_metrics.txt" "$TMP/s.txt" >"$TMP/cmp.txt" 2>&1
	check "$S: every exact row equals SckyzO's series ($(tail -1 "$TMP/cmp.txt"))" grep -q ' 0 differ$' "$TMP/cmp.txt"
	grep '^differs' "$TMP/cmp.txt" | head -5 | sed 's/^/     /'
	compare "$RIVOSINC" "$STATE/rivosinc_exporter_metrics.txt" "$TMP/r.txt" >"$TMP/cmp.txt" 2>&1
	check "$S: every exact row equals rivosinc's series ($(tail -1 "$TMP/cmp.txt"))" grep -q ' 0 differ$' "$TMP/cmp.txt"
	grep '^differs' "$TMP/cmp.txt" | head -5 | sed 's/^/     /'
done
finish
