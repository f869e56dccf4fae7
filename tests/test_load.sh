#!/bin/sh
# Short, bounded variant of tests/load.sh for `make test` (about 15 s): 50 connections for 5 s with
# --web.max-connections 512 and --slurmctld.min-interval 1 (so the one-fetch-per-window check sees
# about 5 windows), then 3 s of the same 50 connections against the default limits (64, 32 per IP),
# where the connections over the per-IP limit must be refused and every admitted one answered 200.
# Asserts zero failed requests, RSS growth < 20 MiB after a 1 s warm-up, fetches per endpoint
# within floor(elapsed/1s) +- 1, bounded threads, and a live shim afterwards (details in
# tests/load.sh). Any of LOAD_SECONDS, CONNECTIONS, MIN_INTERVAL, ... may be overridden from the
# environment. Needs wrk (Debian package; installed here if missing and possible, else skipped).
cd "$(dirname "$0")/.." || exit 1
if ! command -v wrk >/dev/null 2>&1; then
	echo "test_load: wrk missing; trying apt-get install -y wrk" >&2
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO="sudo -n"
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends wrk >/dev/null 2>&1 ||
		{ $SUDO apt-get update -qq >/dev/null 2>&1 &&
			DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends wrk >/dev/null 2>&1; }
	if ! command -v wrk >/dev/null 2>&1; then
		echo "SKIP test_load: wrk is not installed and 'apt-get install wrk' failed; the load checks did not run"
		echo "0 passed, 0 failed"
		exit 0
	fi
fi
LOAD_SECONDS=${LOAD_SECONDS:-5} CONNECTIONS=${CONNECTIONS:-50} MIN_INTERVAL=${MIN_INTERVAL:-1} \
	WARMUP_SECONDS=${WARMUP_SECONDS:-1} REFUSAL_SECONDS=${REFUSAL_SECONDS:-3} \
	exec sh tests/load.sh
