#!/bin/sh
# tests/test_soak_judge.sh: the judgement of tests/soak.sh's native RSS samples (trend_growth in
# tests/lib.sh, bound NATIVE_RSS_BOUND_KB 4096 kB) on series measured and made up: a swing between
# two samples passes, however wide; a steady growth fails. No process is started (milliseconds).
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
PASS=0
FAIL=0
BOUND=4096

# judged NAME WANT(pass|fail) SAMPLES...: trend_growth 2 on the samples against BOUND
judged() {
	name=$1 want=$2
	shift 2
	g=$(trend_growth 2 "$@")
	if [ "$g" != unknown ] && [ "$g" -lt $BOUND ]; then got=pass; else got=fail; fi
	check "$name: trend $g kB, $want (bound $BOUND kB)" [ "$got" = "$want" ]
}
# growing START STEP N: N samples from START, STEP kB more each
growing() { i=0; while [ "$i" -lt "$3" ]; do echo $(($1 + i * $2)); i=$((i + 1)); done; }
# swinging LOW HIGH STEP N: N samples alternating low and high, both STEP kB more each
swinging() {
	i=0
	while [ "$i" -lt "$4" ]; do
		if [ $((i % 2)) -eq 0 ]; then echo $(($1 + i * $3)); else echo $(($2 + i * $3)); fi
		i=$((i + 1))
	done
}

# the native samples of the full run in docs/reliability.md (every 1,000 scrapes)
judged "native run of docs/reliability.md" pass 12388 12632 12164 12548 12376 12632 12388 12632 12140 12604
# valgrind's swing of 96 / 112 MB between samples (2,000 scrapes, every 200) after its warm-up
# shellcheck disable=SC2046
judged "a 16 MB swing between two samples" pass 112096 96068 112460 96068 112460 96068 112460 96068 112460 96068
# shellcheck disable=SC2046
judged "a 16 MB swing, high first, then low" pass $(swinging 112096 96068 0 10)
# the whole valgrind series, the first sample before valgrind's own memory had filled (87,076 kB):
# its lows rise by 9 MB, more than the 8 MiB the valgrind RSS was held to, while the heap in use was
# flat to the byte: why valgrind's RSS is reported, not asserted
g=$(trend_growth 2 87076 112096 96068 112460 96068 112460 96068 112460 96068 104296)
check "valgrind series with its warm-up: trend $g kB, over 8 MiB (valgrind's RSS is not asserted)" [ "$g" -gt 8192 ]
# shellcheck disable=SC2046
judged "+2 MB per batch" fail $(growing 12000 2048 10)
# shellcheck disable=SC2046
judged "+2 MB per batch under a 16 MB swing" fail $(swinging 96068 112096 2048 10)
# shellcheck disable=SC2046
judged "+512 kB per batch (8 batches between the windows: the bound)" fail $(growing 12000 512 10)
# shellcheck disable=SC2046
judged "+256 kB per batch" pass $(growing 12000 256 10)
judged "+2 MB per batch, 3 samples (the fewest: the last less the first)" fail 12000 14048 16096
judged "+1 MB per batch, 3 samples" pass 12000 13024 14048
judged "4 MB once, after the first two samples, kept" fail 12000 12100 16100 16200 16096 16150
check "a sample that is not a number: unknown" [ "$(trend_growth 2 12000 12x 12100)" = unknown ]
check "one sample: unknown" [ "$(trend_growth 2 12000)" = unknown ]
finish
