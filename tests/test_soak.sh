#!/bin/sh
# Short, bounded variant of tests/soak.sh for `make test` (about 2 minutes, at most about 3):
# 2000 sequential scrapes of a shim running under valgrind --leak-check=full --error-exitcode=99,
# with --slurmctld.min-interval 0 (every scrape fetches and parses all five endpoints), RSS and heap
# in use sampled every 200 scrapes, then SIGTERM: zero valgrind errors, nothing lost, exit 0, every
# scrape 200, flat heap in use after the first 200 scrapes (valgrind's own RSS is reported, not
# asserted); then the same 2000 scrapes against the plain binary, whose RSS must not trend upwards
# (details and bounds in tests/soak.sh).
# Bounded in time: no new batch after 110 s in a phase (MAX_SECONDS) and no batch longer than 30 s
# (BATCH_SECONDS: a cut batch is sampled and the phase goes on); on a slow machine fewer scrapes are
# done (at least 3 samples are required: on a 2-core machine at load 16, about 190 scrapes each under
# valgrind). The full 10,000-scrape run is `SCRAPES=10000 sh tests/soak.sh`, by hand.
# Any of SCRAPES, SAMPLE_EVERY, MIN_INTERVAL, ... may be overridden from the environment.
cd "$(dirname "$0")/.." || exit 1
SCRAPES=${SCRAPES:-2000} SAMPLE_EVERY=${SAMPLE_EVERY:-200} MIN_INTERVAL=${MIN_INTERVAL:-0} \
	MAX_SECONDS=${MAX_SECONDS:-110} BATCH_SECONDS=${BATCH_SECONDS:-30} MIN_SAMPLES=${MIN_SAMPLES:-3} \
	exec sh tests/soak.sh
