#!/bin/sh
# The whole test suite, as CI runs it: unit and integration tests (cmocka and shell), then the same
# tests under ASan+UBSan, the HTTP tests under TSan, the cmocka tests under valgrind, and each
# libFuzzer target for FUZZ_SECONDS (60).
# Installs missing Debian packages first.
# Prints "N passed, M failed" (suites) last; exits non-zero if any suite failed.
set -u
cd "$(dirname "$0")/.."
scripts/install-deps.sh all || { echo "test.sh: could not install the dependencies" >&2; exit 1; }
passed=0
failed=0
suite() {
	name=$1
	shift
	echo "==== $name: $*"
	if "$@"; then
		passed=$((passed + 1))
		echo "==== $name: passed"
	else
		failed=$((failed + 1))
		echo "==== $name: FAILED"
	fi
}
suite build make -s
suite tests make -s test
suite asan make -s asan
suite tsan make -s tsan
suite valgrind make -s valgrind
suite fuzz make -s fuzz-run FUZZ_SECONDS="${FUZZ_SECONDS:-60}"
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
