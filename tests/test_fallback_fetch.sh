#!/bin/sh
# Which endpoints a scrape fetches, against fake_slurmctld serving a copy of R2 (Slurm 25.11.7) and
# counting each endpoint's requests: a row is fetched only the forms it may be served with. With
# --slurmrestd.jobs and every slurmrestd document usable, slurmctld is asked for /metrics/scheduler
# alone (its rows have no other form), not for /metrics/jobs-users-accts, /metrics/partitions or
# /metrics/nodes, whose rows are all served from slurmrestd; when /jobs/state and /jobs answer badly
# (and then /nodes), the rows that read them fall back to their native forms in that same scrape,
# those endpoints fetched for it, with the old exporter's values; once the documents are good again
# the native endpoints are no longer fetched. With --slurmrestd.url alone the per-user, per-account
# and per-partition job rows have no usable preferred form, so their walks are fetched every scrape.
# Env: SHIM_BIN, FAKE_SLURMCTLD. Run from the repository root. Needs curl.
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
fake_test fallback tests/fixtures/slurm-25.11-rest/R2-busy-mix-draining

# every document fetched anew on every scrape: /jobs too (no share rule, no floor)
shim() {
	start_shim_with 100 --slurmrestd.url "http://127.0.0.1:$FAKE_PORT" --slurmrestd.api-version v0.0.44 \
		--slurmrestd.min-interval 0 --slurmrestd.max-share 0 --slurmrestd.jobs.min-interval 0 \
		--slurmrestd.jobs.max-share 0 "$@"
}
scrape() { curl -s "$URL" >"$TMP/m"; }
has() { if grep -qF -- "$2" "$TMP/m"; then ok "$1"; else bad "$1: lacks: $2"; fi; }
lacks() { if grep -qF -- "$2" "$TMP/m"; then bad "$1: has: $2"; else ok "$1"; fi; }
# the fake's request counts, one "name count" a line
counts() { curl -s "http://127.0.0.1:$FAKE_PORT/_stats" >"$TMP/$1"; }
count_in() { awk -v n="$2" '$1 == n { print $2 }' "$TMP/$1"; }
# grew NAME FILE_BEFORE FILE_AFTER ENDPOINT BY: ENDPOINT was requested BY more times between the two
grew() {
	a=$(count_in "$2" "$4") b=$(count_in "$3" "$4")
	check "$1: $4 requested $((b - a)) time(s), want $5" [ "$((b - a))" = "$5" ]
}
from() { has "$1: $2 from $3" "slurm_exporter_shim_row_fidelity{family=\"$2\",fidelity=\"exact\",upstream=\"$3\"} 1"; }
legacy_line() { grep -E "^$1 " "$SRC/legacy_exporter_metrics.txt"; }

# 1. --slurmrestd.jobs, every document good: after the first scrape (nothing known yet: every form
# fetched, as before), slurmctld is asked for /metrics/scheduler alone
start_fake || { bad "fake did not start"; finish; }
shim --slurmrestd.jobs || { bad "shim did not start"; finish; }
scrape
scrape
counts c0
scrape
scrape
counts c1
grew "all served" c0 c1 jobs-users-accts 0
grew "all served" c0 c1 partitions 0
grew "all served" c0 c1 nodes 0
grew "all served" c0 c1 jobs 0
grew "all served" c0 c1 scheduler 2
grew "all served" c0 c1 rest_jobs_state 2
grew "all served" c0 c1 rest_jobs 2
grew "all served" c0 c1 rest_nodes 2
check "all served: the eleven queue families equal the old exporter's" queue_equal
from "all served" slurm_queue_pending slurmrestd
from "all served" slurm_account_jobs_pending slurmrestd
from "all served" slurm_partition_cpus_allocated slurmrestd
lacks "all served: jobs-users-accts not fetched, not said down" 'slurm_exporter_shim_up{endpoint="jobs-users-accts"}'
has "all served: the scheduler rows, native only" 'slurm_exporter_shim_row_fidelity{family="slurm_scheduler_queue_size",fidelity="exact",upstream="slurmctld"} 1'

# 2. /jobs/state and /jobs answer badly: the rows that read them fall back in this same scrape, the
# walk they need fetched for it
cp "$STATE/rest_jobs_state.json" "$TMP/good_state.json"
cp "$STATE/rest_jobs.json" "$TMP/good_jobs.json"
cp "$STATE/rest_nodes.json" "$TMP/good_nodes.json"
printf '[]' >"$STATE/rest_jobs_state.json"
printf '[]' >"$STATE/rest_jobs.json"
scrape
counts c2
grew "jobs bad" c1 c2 jobs-users-accts 1
grew "jobs bad" c1 c2 nodes 1 # its voucher: an empty answer proves "no jobs" only with it
grew "jobs bad" c1 c2 partitions 1 # slurm_partition_jobs_pending's native form
has "jobs bad: /jobs/state down" 'slurm_exporter_shim_up{endpoint="slurmrestd-jobs-state"} 0'
from "jobs bad" slurm_queue_pending slurmctld
from "jobs bad" slurm_account_jobs_pending slurmctld
has "jobs bad: the native value" "$(legacy_line slurm_queue_pending)"
from "jobs bad: still" slurm_nodes_alloc slurmrestd

# 3. /nodes too: the node rows fall back in this scrape (the walks, whose documents failed last time,
# are fetched with the rest from the start)
printf '[]' >"$STATE/rest_nodes.json"
scrape
counts c3
grew "nodes bad" c2 c3 nodes 1
grew "nodes bad" c2 c3 jobs-users-accts 1
has "nodes bad: /nodes down" 'slurm_exporter_shim_up{endpoint="slurmrestd-nodes"} 0'
from "nodes bad" slurm_cpus_total slurmctld
has "nodes bad: the native value" "$(legacy_line slurm_cpus_total)"
from "nodes bad" slurm_queue_pending slurmctld

# 4. good again: the next scrape still fetches the fallbacks (the documents failed last time), the
# ones after it do not
cp "$TMP/good_state.json" "$STATE/rest_jobs_state.json"
cp "$TMP/good_jobs.json" "$STATE/rest_jobs.json"
cp "$TMP/good_nodes.json" "$STATE/rest_nodes.json"
scrape
counts c4
scrape
scrape
counts c5
grew "good again" c4 c5 jobs-users-accts 0
grew "good again" c4 c5 partitions 0
grew "good again" c4 c5 nodes 0
check "good again: the eleven queue families equal the old exporter's" queue_equal
from "good again" slurm_queue_pending slurmrestd
from "good again" slurm_cpus_total slurmrestd
killwait "$SHIM_PID"
SHIM_PID=''

# 5. --slurmrestd.url alone: the per-user, per-account and per-partition job rows are native only
# (their slurmrestd form reads /jobs), so their walks are fetched on every scrape; /jobs never
shim || { bad "shim did not start"; finish; }
scrape
scrape
counts c6
scrape
scrape
counts c7
grew "url alone" c6 c7 jobs-users-accts 2
grew "url alone" c6 c7 partitions 2
grew "url alone" c6 c7 rest_jobs_state 2
grew "url alone" c6 c7 rest_jobs 0
check "url alone: the eleven queue families equal the old exporter's" queue_equal
from "url alone" slurm_queue_pending slurmrestd
from "url alone" slurm_account_jobs_pending slurmctld
finish
