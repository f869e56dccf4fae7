#!/bin/sh
# The shipped table's native catalog ("validated_on") is what the real captures give
# (tests/gen-catalog.py --check), and the check can fail: a family a capture serves taken out of
# the catalog, or a family added to a capture, or a capture's family renamed, each fail it (in a
# copy of the repository's catalog and captures).
cd "$(dirname "$0")/.." || exit 1
PASS=0 FAIL=0
. tests/lib.sh
TMP=$(mktemp -d /tmp/shimtest-catalogsh-XXXXXX) || exit 1
trap 'rm -rf "$TMP"' EXIT

check "the shipped catalog is what the captures give" python3 tests/gen-catalog.py --check

# a copy holding the generator, the table and every capture's metrics_*.txt
copy() {
	rm -rf "$TMP/r" && mkdir -p "$TMP/r/tests" "$TMP/r/mappings" || exit 1
	cp tests/gen-catalog.py "$TMP/r/tests/" && cp mappings/prometheus-slurm-exporter.json "$TMP/r/mappings/" || exit 1
	find tests/fixtures/slurm-25.11 tests/fixtures/slurm-25.11-rest tests/fixtures/slurm-26.05 -name 'metrics_*.txt' \
		! -name '*.headers.txt' | while read -r f; do
		mkdir -p "$TMP/r/$(dirname "$f")" && cp "$f" "$TMP/r/$f"
	done
}
fails() { (cd "$TMP/r" && ! python3 tests/gen-catalog.py --check 2>"$TMP/err") && grep -q 'is not what the captures give' "$TMP/err"; }

copy
check "the copy passes as the repository does" sh -c "cd '$TMP/r' && python3 tests/gen-catalog.py --check"
sed -i '/"family": "slurm_partition_jobs_gpus_alloc"/d' "$TMP/r/mappings/prometheus-slurm-exporter.json"
check "a captured family missing from the catalog fails" fails

copy
printf '# TYPE slurm_sched_new gauge\nslurm_sched_new 1\n' >>"$TMP/r/tests/fixtures/slurm-26.05/02-busy-gpu/metrics_scheduler.txt"
check "a family a capture adds fails" fails

copy
sed -i 's/^slurm_node_cpus_idle{/slurm_node_cpus_free{/' "$TMP/r/tests/fixtures/slurm-25.11/01-idle/metrics_nodes.txt"
check "a capture's family renamed fails" fails

copy
(cd "$TMP/r" && python3 tests/gen-catalog.py) && check "regenerated, the copy passes again" \
	sh -c "cd '$TMP/r' && python3 tests/gen-catalog.py --check"
finish
