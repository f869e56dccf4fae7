#!/bin/sh
# The one-shot modes wait for slurmrestd: --once and --compare-legacy have no next scrape to serve a
# slurmrestd answer that comes late, so they wait for it until the scrape's deadline instead of the
# daemon's 2 s after slurmctld's answers (docs/operations.md, "slurmrestd"). Against two
# fake_slurmctld serving a copy of R2 (Slurm 25.11.7): slurmctld's answering at once, slurmrestd's
# each answer 3 s late (as slurmrestd's /jobs/state of 20,000 jobs on a loaded host): --once serves
# the eleven queue families from /jobs/state, equal to the old exporter's, every slurmrestd document
# up and none "not waited for"; --compare-legacy finds them equal, read from slurmrestd. The daemon
# keeps its bounded wait: its first scrape answers about 2 s after slurmctld's, on the native forms.
# Env: SHIM_BIN, FAKE_SLURMCTLD. Run from the repository root. Needs curl.
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
fake_test oneshot tests/fixtures/slurm-25.11-rest/R2-busy-mix-draining
has() { if grep -qF -- "$2" "$3"; then ok "$1"; else bad "$1: lacks: $2"; fi; }
lacks() { if grep -qF -- "$2" "$3"; then bad "$1: has: $2"; else ok "$1"; fi; }

start_fake --legacy "$SRC/legacy_exporter_metrics.txt" || { bad "slurmctld's fake did not start"; finish; }
CTLD_PORT=$FAKE_PORT MORE_PIDS=$FAKE_PID
start_fake --delay-ms 3000 || { bad "slurmrestd's fake did not start"; finish; }
REST_PORT=$FAKE_PORT
set -- --slurmctld.url "http://127.0.0.1:$CTLD_PORT" --mapping.file "$MAPPING" \
	--slurmrestd.url "http://127.0.0.1:$REST_PORT" --slurmrestd.api-version v0.0.44

# 1. --once waits for slurmrestd's late answers
t0=$(date +%s)
"$SHIM_BIN" "$@" --once >"$TMP/once" 2>"$TMP/once.log"
rc=$? t=$(($(date +%s) - t0))
check "--once exits 0 ($rc)" [ "$rc" = 0 ]
check "--once waited for the 3 s answers, within the 10 s timeout ($t s)" eval '[ "$t" -ge 3 ] && [ "$t" -le 9 ]'
for e in nodes shares diag jobs-state; do
	has "--once: slurmrestd-$e up" "slurm_exporter_shim_up{endpoint=\"slurmrestd-$e\"} 1" "$TMP/once"
done
lacks "--once: nothing not waited for" 'slurm_exporter_shim_not_waited_for' "$TMP/once"
check "--once: the eleven queue families equal the old exporter's" queue_equal "$TMP/once"
has "--once: queue rows from slurmrestd" \
	'slurm_exporter_shim_row_fidelity{family="slurm_queue_pending",fidelity="exact",upstream="slurmrestd"} 1' "$TMP/once"

# 2. --compare-legacy too
"$SHIM_BIN" "$@" --compare-legacy "http://127.0.0.1:$CTLD_PORT/metrics" >"$TMP/cmp" 2>&1
for f in pending running completed failed; do
	check "--compare-legacy: slurm_queue_$f equal, from slurmrestd" \
		grep -qE "^equal +exact +slurmrestd +slurm_queue_$f " "$TMP/cmp"
done

# 3. the daemon keeps its bounded wait: the first scrape does not wait the 3 s
FAKE_PORT=$CTLD_PORT
start_shim_with 100 --slurmrestd.url "http://127.0.0.1:$REST_PORT" --slurmrestd.api-version v0.0.44 ||
	{ bad "shim did not start"; finish; }
curl -s -o "$TMP/m" -w '%{time_total}\n' "http://127.0.0.1:$PORT/metrics" >"$TMP/time"
# shellcheck disable=SC2046 # awk's verdict
check "daemon: the first scrape answered within 2.9 s ($(cat "$TMP/time") s)" [ $(awk '{ print ($1 < 2.9) }' "$TMP/time") = 1 ]
has "daemon: the first scrape did not wait for /jobs/state" \
	'slurm_exporter_shim_not_waited_for{endpoint="slurmrestd-jobs-state"} 1' "$TMP/m"
finish
