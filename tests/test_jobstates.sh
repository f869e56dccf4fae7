#!/bin/sh
# slurmrestd's /jobs/state through the daemon, against fake_slurmctld serving a copy of R2 (Slurm
# 25.11.7): with --slurmrestd.url alone the eleven job-state queue families come from /jobs/state,
# exact and equal to the old exporter's, and /jobs is never requested (the fake's request counts);
# each bad answer of /jobs/state (shapeless, cut, a job without a state, a state name no data_parser
# writes, errors[] set, HTTP 500) is a named error in the log, on the status page and in the self
# metrics, the rows fall back to slurmctld's native forms, and none is served from the bad answer;
# with /jobs refused (500) and --slurmrestd.jobs, the queue rows are still exact from /jobs/state and
# the rows that need /jobs are left out, never 0; each row's slurm_exporter_shim_row_age_seconds is
# the age of the answers it was computed from (the reused /jobs' rows older than /jobs/state's).
# Env: SHIM_BIN, FAKE_SLURMCTLD. Run from the repository root. Needs curl.
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
fake_test jobstates tests/fixtures/slurm-25.11-rest/R2-busy-mix-draining

shim() {
	start_shim_with 100 --slurmrestd.url "http://127.0.0.1:$FAKE_PORT" --slurmrestd.api-version v0.0.44 \
		--slurmrestd.min-interval 0 --slurmrestd.max-share 0 "$@"
}
scrape() { curl -s "$URL" >"$TMP/m"; curl -s "http://127.0.0.1:$PORT/" >"$TMP/page"; }
has() { if grep -qF -- "$2" "$3"; then ok "$1"; else bad "$1: lacks: $2"; fi; }
lacks() { if grep -qF -- "$2" "$3"; then bad "$1: has: $2"; else ok "$1"; fi; }

# 1. --slurmrestd.url alone: /jobs/state, exact; /jobs never requested
start_fake --fault-endpoint rest_jobs_state || { bad "fake did not start"; finish; }
shim || { bad "shim did not start"; finish; }
scrape
scrape
check "url alone: the eleven queue families equal the old exporter's" queue_equal
has "url alone: from slurmrestd" 'slurm_exporter_shim_row_fidelity{family="slurm_queue_pending",fidelity="exact",upstream="slurmrestd"} 1' "$TMP/m"
has "url alone: /jobs/state up" 'slurm_exporter_shim_up{endpoint="slurmrestd-jobs-state"} 1' "$TMP/m"
lacks "url alone: no pending_dependency (needs /jobs)" 'slurm_queue_pending_dependency ' "$TMP/m"
n=$(stat_of rest_jobs_state)
check "url alone: /jobs/state requested ($n)" [ "${n:-0}" -ge 2 ]
n=$(stat_of rest_jobs)
check "url alone: /jobs never requested ($n)" [ "$n" = 0 ]

# 2. bad answers of /jobs/state: named, native fallback, nothing from the bad answer
cp "$STATE/rest_jobs_state.json" "$TMP/good.json"
# each bad answer after a good one: the log says when a source goes down, not on every scrape
bad_answer() { # NAME REASON BODY
	printf '%s' "$3" >"$STATE/rest_jobs_state.json"
	scrape
	has "$1: down" 'slurm_exporter_shim_up{endpoint="slurmrestd-jobs-state"} 0' "$TMP/m"
	has "$1: native fallback" 'slurm_exporter_shim_row_fidelity{family="slurm_queue_pending",fidelity="exact",upstream="slurmctld"} 1' "$TMP/m"
	has "$1: native value" 'slurm_queue_pending 9' "$TMP/m"
	has "$1: named on the status page" "$(printf '%s' "$2" | sed "s/'/\&#39;/g")" "$TMP/page"
	grep -F "endpoint /slurm/{version}/jobs/state failed: slurmrestd http://127.0.0.1:$FAKE_PORT: " "$TMP/shim.log" >"$TMP/failed"
	has "$1: named in the log" "$2" "$TMP/failed"
	cp "$TMP/good.json" "$STATE/rest_jobs_state.json"
	scrape
	check "$1: then a good answer: exact again" queue_equal
}
bad_answer shapeless "unusable JSON, 1 malformed item(s), first at byte 1: the document is an array, not an object" '[]'
bad_answer cut "premature EOF" "$(head -c 1000 "$TMP/good.json")"
bad_answer "no state" "job 7 without a state" '{"jobs": [{"job_id": "7", "state": []}], "errors": []}'
bad_answer "unknown state" "a job with state 'HIBERNATING', a name no data_parser writes" \
	'{"jobs": [{"job_id": "7", "state": ["PENDING", "HIBERNATING"]}]}'
bad_answer "errors[] set" "slurmrestd reported 1 error(s): Unable to query jobs" \
	'{"jobs": [{"job_id": "7", "state": ["PENDING"]}], "errors": [{"error": "Unable to query jobs"}]}'
curl -s "http://127.0.0.1:$FAKE_PORT/_fault/500" >/dev/null
scrape
has "HTTP 500: down" 'slurm_exporter_shim_up{endpoint="slurmrestd-jobs-state"} 0' "$TMP/m"
has "HTTP 500: status" 'slurm_exporter_shim_http_status{endpoint="slurmrestd-jobs-state"} 500' "$TMP/m"
has "HTTP 500: native fallback" 'slurm_exporter_shim_row_fidelity{family="slurm_queue_pending",fidelity="exact",upstream="slurmctld"} 1' "$TMP/m"
has "HTTP 500: named in the log" "/slurm/{version}/jobs/state failed: slurmrestd http://127.0.0.1:$FAKE_PORT: HTTP status 500" "$TMP/shim.log"
curl -s "http://127.0.0.1:$FAKE_PORT/_fault/none" >/dev/null
scrape
check "good again: the queue families from /jobs/state" queue_equal
has "good again: from slurmrestd" 'slurm_exporter_shim_row_fidelity{family="slurm_queue_pending",fidelity="exact",upstream="slurmrestd"} 1' "$TMP/m"
n=$(stat_of rest_jobs)
check "bad answers: /jobs never requested ($n)" [ "$n" = 0 ]
killwait "$SHIM_PID" "$FAKE_PID"
SHIM_PID='' FAKE_PID=''

# 3. --slurmrestd.jobs with /jobs refused: the queue rows still exact; what needs /jobs left out
start_fake --fault 500 --fault-endpoint rest_jobs || { bad "fake did not start"; finish; }
shim --slurmrestd.jobs || { bad "shim did not start"; finish; }
scrape
check "/jobs refused: the eleven queue families equal the old exporter's" queue_equal
has "/jobs refused: /jobs down" 'slurm_exporter_shim_up{endpoint="slurmrestd-jobs"} 0' "$TMP/m"
has "/jobs refused: from /jobs/state" 'slurm_exporter_shim_row_fidelity{family="slurm_queue_running",fidelity="exact",upstream="slurmrestd"} 1' "$TMP/m"
lacks "/jobs refused: pending_dependency left out, not 0" 'slurm_queue_pending_dependency ' "$TMP/m"
n=$(stat_of rest_jobs)
check "/jobs refused: /jobs requested with --slurmrestd.jobs ($n)" [ "${n:-0}" -ge 1 ]
killwait "$SHIM_PID" "$FAKE_PID"
SHIM_PID='' FAKE_PID=''

# 4. every row says how old its answers are: /jobs reused (cost-scheduled, at least 30 s), /jobs/state
# fetched anew on every scrape (--slurmrestd.min-interval 0 and --slurmrestd.max-share 0 here)
row_age() { awk -v f="slurm_exporter_shim_row_age_seconds{family=\"$1\"}" '$1 == f { print $2 }' "$TMP/m"; }
start_fake || { bad "fake did not start"; finish; }
shim --slurmrestd.jobs || { bad "shim did not start"; finish; }
scrape
sleep 2
scrape
old=$(row_age slurm_queue_pending_dependency) new=$(row_age slurm_queue_pending)
check "row age: a row of the reused /jobs answer ($old s) is older than 1.5 s" awk -v a="$old" 'BEGIN { exit !(a >= 1.5) }'
check "row age: a row of /jobs/state ($new s) is fresh" awk -v a="$new" 'BEGIN { exit !(a != "" && a < 1.5) }'
has "row age: /jobs' answer age" 'slurm_exporter_shim_payload_age_seconds{endpoint="slurmrestd-jobs"} ' "$TMP/m"
check "row age: /jobs/state equal to the old exporter's still" queue_equal
finish
