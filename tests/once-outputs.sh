#!/bin/sh
# tests/once-outputs.sh BIN OUTDIR [FAKE]: every `--once` answer (and every --compare-legacy
# report) of BIN on every capture and generated payload, one file per case in OUTDIR, with the self
# metrics' timings masked, so that two builds can be compared byte for byte:
#
#   tests/once-outputs.sh /tmp/base/slurm-exporter-shim /tmp/once-before
#   tests/once-outputs.sh ./slurm-exporter-shim /tmp/once-after
#   diff -r /tmp/once-before /tmp/once-after && echo identical
#
# Cases: the captures of tests/fixtures (slurm-25.11 and its config variants, slurm-26.05;
# slurm-25.11-rest without slurmrestd, with it, and with --slurmrestd.jobs), each with and without
# --gpus-acct; the generated payloads tests/bench/out/nodes-{1000,10000,50000} (make them with
# tests/bench/gen_payload.py, as make bench does; a missing one is skipped and said so). With FAKE
# (tests/fake_slurmctld's binary), --compare-legacy against the old exporter's page of every capture
# that has one, in both formats. Masked: the values of the families that time something
# (fetch duration, payload age, row age, scrape duration, reload timestamp). Each file ends with the exit
# code. Runs from the repository root.
set -eu
bin=$1
out=$2
fake=${3:-}
mkdir -p "$out"

# The self metrics whose values are times: masked.
mask() {
	sed -E 's/^(slurm_exporter_shim_(fetch_duration_seconds|payload_age_seconds|row_age_seconds|scrape_duration_seconds|mapping_reload_timestamp_seconds)(\{[^}]*\})?) .*/\1 TIME/'
}

# one NAME ARGS...: the answer (stdout and stderr) and the exit code into OUT/NAME.
one() {
	name=$1
	shift
	rc=0
	"$bin" --once --mapping.file mappings/prometheus-slurm-exporter.json "$@" >"$out/$name.out" 2>"$out/$name.err" || rc=$?
	{ mask <"$out/$name.out"; echo "-- stderr"; mask <"$out/$name.err"; echo "-- exit $rc"; } >"$out/$name"
	rm -f "$out/$name.out" "$out/$name.err"
}

for d in tests/fixtures/slurm-25.11/0*/ tests/fixtures/slurm-25.11/config-variants/*/ tests/fixtures/slurm-26.05/*/ \
	 tests/fixtures/slurm-25.11-rest/*/; do
	n=$(echo "$d" | sed -e 's|tests/fixtures/||' -e 's|/$||' -e 's|/|_|g')
	for g in "" --gpus-acct; do
		one "$n$g" --replay-dir "$d" $g
		case $d in *-rest/*)
			one "$n-rest$g" --replay-dir "$d" --slurmrestd.url http://replay.invalid $g
			one "$n-rest-jobs$g" --replay-dir "$d" --slurmrestd.url http://replay.invalid --slurmrestd.jobs $g
		esac
	done
done
for n in 1000 10000 50000; do
	d=tests/bench/out/nodes-$n
	if [ ! -d "$d" ]; then
		echo "once-outputs: $d missing (python3 tests/bench/gen_payload.py --nodes $n --out $d): skipped" >&2
		continue
	fi
	for g in "" --gpus-acct; do
		one "nodes-$n$g" --replay-dir "$d" $g
	done
done

[ -n "$fake" ] || exit 0
# --compare-legacy: the old exporter's page (LEGACY) served by the fake, the shim replaying DIR.
port_file=$(mktemp)
compare() {
	name=$1 dir=$2 legacy=$3
	shift 3
	rm -f "$port_file"
	"$fake" --port 0 --port-file "$port_file" --dir "$dir" --legacy "$dir/$legacy" &
	pid=$!
	i=0
	while [ ! -s "$port_file" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	for f in table json; do
		rc=0
		"$bin" --compare-legacy "http://127.0.0.1:$(cat "$port_file")/metrics" --compare-legacy.format $f \
			--mapping.file mappings/prometheus-slurm-exporter.json --replay-dir "$dir" "$@" \
			>"$out/compare-$name-$f" 2>/dev/null || rc=$?
		echo "-- exit $rc" >>"$out/compare-$name-$f"
	done
	kill $pid
	wait $pid 2>/dev/null || true
}
for d in tests/fixtures/slurm-25.11/0*/ tests/fixtures/slurm-26.05/*/ tests/fixtures/slurm-25.11-rest/*/; do
	[ -f "$d/legacy_exporter_metrics.txt" ] || continue
	n=$(echo "$d" | sed -e 's|tests/fixtures/||' -e 's|/$||' -e 's|/|_|g')
	compare "$n" "$d" legacy_exporter_metrics.txt
	case $d in *-rest/*)
		compare "$n-rest" "$d" legacy_exporter_metrics_gpus.txt --slurmrestd.url http://replay.invalid --slurmrestd.jobs --gpus-acct
	esac
done
rm -f "$port_file"
