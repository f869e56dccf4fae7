# tests/lib.sh: helpers shared by the shell load and soak tests (sourced, not run).
# The caller sets PASS=0 FAIL=0 before using ok/bad/check/finish.

# killwait PID...: SIGTERM and reap each (empty arguments are skipped)
killwait() {
	for p in "$@"; do
		[ -n "$p" ] || continue
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
}

ok() { PASS=$((PASS + 1)); echo "ok   $1"; }
bad() { FAIL=$((FAIL + 1)); echo "FAIL $1"; }
# check NAME COMMAND...: ok if the command succeeds
check() { name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }
# finish: the closing "N passed, M failed" line, and the exit status
finish() { echo "$PASS passed, $FAIL failed"; [ "$FAIL" -eq 0 ]; exit $?; }

# a random port in 20000-59999 (callers retry when it is taken)
rand_port() { echo $((20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 40000)); }
