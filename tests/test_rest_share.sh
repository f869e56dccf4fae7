#!/bin/sh
# --slurmrestd.max-share: every slurmrestd document but /jobs is cost-scheduled, against
# fake_slurmctld serving a copy of R2 (Slurm 25.11.7) with its answers made slow (/_delay-ms).
# With --slurmrestd.min-interval 0, a /jobs/state fetch of 1.2 s at the default 5% is not fetched
# again for about 23 s: the next scrapes do not request it (the fake's request counts), and its
# rows stay served from it, exact, saying their age; the self metrics give its cost and interval.
# With --slurmrestd.max-share 0 it is fetched on every scrape (the floor alone). A refresh that is
# slow (its last usable fetch took over a second; then it hangs) is not waited for: the scrape serves
# the last usable /jobs/state answer, with its age, at once, rather than falling back to slurmctld's
# forms. slurmctld's answers are fetched on every scrape, so that each answer is rendered anew (an
# answer of the very same payloads is reused with its self metrics: docs/reliability.md).
# Env: SHIM_BIN, FAKE_SLURMCTLD. Run from the repository root. Needs curl.
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
fake_test rest-share tests/fixtures/slurm-25.11-rest/R2-busy-mix-draining

shim() {
	start_shim_with 100 --slurmrestd.url "http://127.0.0.1:$FAKE_PORT" --slurmrestd.api-version v0.0.44 \
		--slurmrestd.min-interval 0 "$@"
}
scrape() { curl -s -m 30 "$URL" >"$TMP/m"; }
has() { if grep -qF -- "$2" "$TMP/m"; then ok "$1"; else bad "$1: lacks: $2"; fi; }
delay() { curl -s "http://127.0.0.1:$FAKE_PORT/_delay-ms/$1" >/dev/null; }
value_of() { awk -v f="$1" '$1 == f { print $2 }' "$TMP/m"; }
row_age() { value_of "slurm_exporter_shim_row_age_seconds{family=\"$1\"}"; }
at_least() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a + 0 >= b + 0) }'; }
below() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a + 0 < b + 0) }'; }
exact() { has "$1: from slurmrestd, exact" 'slurm_exporter_shim_row_fidelity{family="slurm_queue_pending",fidelity="exact",upstream="slurmrestd"} 1'; }
now() { date +%s.%N; }
took() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }

# 1. the default share (5%): a 1.2 s /jobs/state fetch is fetched again only ~23 s later
start_fake --delay-ms 1200 || { bad "fake did not start"; finish; }
shim || { bad "shim did not start"; finish; }
scrape
n0=$(stat_of rest_jobs_state)
exact "default share, first scrape"
cost=$(value_of 'slurm_exporter_shim_fetch_cost_seconds{endpoint="slurmrestd-jobs-state"}')
ival=$(value_of 'slurm_exporter_shim_fetch_interval_seconds{endpoint="slurmrestd-jobs-state"}')
check "default share: /jobs/state's cost ($cost s) is the slow fetch's" at_least "$cost" 1.2
check "default share: its interval ($ival s) is cost / 5% - cost" \
	awk -v c="$cost" -v i="$ival" 'BEGIN { exit !(c != "" && i != "" && (i - (c / 0.05 - c))^2 < 0.01) }'
sleep 1
scrape
sleep 1
scrape
n1=$(stat_of rest_jobs_state)
check "default share: /jobs/state not requested again ($n0 then $n1)" [ "${n1:-x}" = "${n0:-y}" ]
check "default share: the eleven queue families equal the old exporter's" queue_equal
exact "default share, reused"
age=$(row_age slurm_queue_pending)
check "default share: the reused rows say their age ($age s)" at_least "$age" 1.9
killwait "$SHIM_PID"
SHIM_PID=''

# 2. --slurmrestd.max-share 0: the floor alone (0 here): fetched on every scrape
delay 0
shim --slurmrestd.max-share 0 || { bad "shim did not start"; finish; }
scrape
n0=$(stat_of rest_jobs_state)
scrape
scrape
n1=$(stat_of rest_jobs_state)
check "share 0: /jobs/state requested on every scrape ($n0 then $n1)" [ "$((n1 - n0))" = 2 ]
killwait "$SHIM_PID"
SHIM_PID=''

# 3. a slow refresh is not waited for: the last usable answer is served meanwhile, with its age
killwait "$FAKE_PID"
FAKE_PID=''
start_fake --delay-ms 1200 --fault-endpoint rest_jobs_state || { bad "fake did not start"; finish; }
shim --slurmrestd.max-share 0 || { bad "shim did not start"; finish; }
scrape
exact "slow refresh, first scrape"
sleep 1
delay 0
curl -s "http://127.0.0.1:$FAKE_PORT/_fault/hang" >/dev/null
t=$(now)
scrape
took=$(took "$t")
check "slow refresh: the scrape did not wait for it ($took s)" below "$took" 1.5
exact "slow refresh, served meanwhile"
check "slow refresh: the eleven queue families equal the old exporter's" queue_equal
age=$(row_age slurm_queue_pending)
check "slow refresh: the rows say their answer's age ($age s)" at_least "$age" 0.9
if grep -qF 'slurm_exporter_shim_not_waited_for{endpoint="slurmrestd-jobs-state"}' "$TMP/m"; then
	bad "slow refresh: /jobs/state said not waited for (its rows fell back)"
else
	ok "slow refresh: /jobs/state not said not waited for"
fi
finish
