#!/bin/sh
# The whole test suite, as CI runs it: unit and integration tests (cmocka and shell), then the same
# tests under ASan+UBSan, the HTTP tests under TSan, the cmocka tests under valgrind, and each
# libFuzzer target for FUZZ_SECONDS (60).
# Installs missing Debian packages first.
# Prints each suite's time, then "N passed, M failed" (suites) last; exits non-zero if any suite
# failed.
set -u
cd "$(dirname "$0")/.."
fuzz_seconds=${FUZZ_SECONDS:-60}
ntargets=$(sed -n 's/^FUZZ_TARGETS *:*= *//p' tests/fuzz/fuzz.mk 2>/dev/null | wc -w)
cat <<INTRO
test.sh: installs the missing Debian packages (scripts/install-deps.sh all), then runs 6 suites:
  build     make                          the daemon and the fake slurmctld
  tests     make test                     every tests/test_*.c (cmocka) and tests/test_*.sh
  asan      make asan                     the same under ASan+UBSan (clang)
  tsan      make tsan                     the HTTP tests under ThreadSanitizer
  valgrind  make valgrind                 the cmocka tests under valgrind
  fuzz      make fuzz-run                 $ntargets libFuzzer targets, ${fuzz_seconds} s each
On 2 cores this takes about 25 minutes plus the fuzzing ($((ntargets * fuzz_seconds / 60)) min), and a few more the first
time for the packages. Each suite prints its time when it ends.
INTRO
scripts/install-deps.sh all || { echo "test.sh: could not install the dependencies" >&2; exit 1; }
passed=0
failed=0
summary=""
suite() {
	name=$1
	shift
	echo "==== $name: $*"
	t0=$(date +%s)
	if "$@"; then
		passed=$((passed + 1))
		verdict=passed
	else
		failed=$((failed + 1))
		verdict=FAILED
	fi
	t=$(($(date +%s) - t0))
	echo "==== $name: $verdict in $((t / 60)) min $((t % 60)) s"
	summary="$summary$(printf '  %-9s %-6s %4d s' "$name" "$verdict" "$t")
"
}
suite build make -s
suite tests make -s test
suite asan make -s asan
suite tsan make -s tsan
suite valgrind make -s valgrind
suite fuzz make -s fuzz-run FUZZ_SECONDS="$fuzz_seconds"
printf 'test.sh: suite times:\n%s' "$summary"
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
