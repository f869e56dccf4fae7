#!/bin/sh
# The OpenMetrics project's parser test suite (tests/conformance/openmetrics-parsers/) through both
# modes of `--check-exposition`:
#   strict    (--strict, src/openmetrics.c): every verdict equals the case's shouldParse;
#   tolerant  (default, src/expo.c): no case crashes or hangs (exit 0 or 1 within 10 s, no sanitizer
#             report), and the bad cases it accepts are exactly those listed in docs/conformance.md;
# and docs/conformance.md is what tests/conformance/gen-doc.sh writes (skipped without a C compiler).
# Run from the repository root (make test); SHIM_BIN is the binary. Last line: "N passed, M failed".
cd "$(dirname "$0")/.." || exit 1
BIN=${SHIM_BIN:-./slurm-exporter-shim}
SUITE=tests/conformance/openmetrics-parsers
DOC=docs/conformance.md
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
# a sanitizer report must not look like "does not parse" (exit 1)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=86"
UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=86"
export ASAN_OPTIONS UBSAN_OPTIONS
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# run MODE-ARGS... < file: sets rc (124 on timeout) and leaves stdout/stderr in $T/out, $T/err
run() {
	timeout 10 "$BIN" --check-exposition "$@" >"$T/out" 2>"$T/err"
	rc=$?
	if grep -q 'Sanitizer\|runtime error' "$T/err"; then
		rc=86
	fi
}

ncases=0
: >"$T/accepted"
for dir in $(ls -d "$SUITE"/*/ | sort); do
	name=$(basename "$dir")
	json=$dir/test.json
	file=$dir$(sed -n 's/.*"file": *"\([^"]*\)".*/\1/p' "$json")
	if [ ! -f "$file" ]; then
		bad "$name: no exposition file named in $json"
		continue
	fi
	ncases=$((ncases + 1))
	if grep -q '"shouldParse": *true' "$json"; then want=0; else want=1; fi

	run --strict <"$file"
	if [ "$rc" -eq "$want" ]; then
		ok
	else
		bad "strict $name: exit $rc, want $want: $(head -c 200 "$T/out")"
		head -3 "$T/err" | sed 's/^/    /'
	fi

	run <"$file"
	case $rc in
	0 | 1) ok ;;
	124) bad "tolerant $name: no answer within 10 s" ;;
	*) bad "tolerant $name: exit $rc (crash or sanitizer report)"; head -5 "$T/err" | sed 's/^/    /' ;;
	esac
	[ "$want" -eq 1 ] && [ "$rc" -eq 0 ] && echo "$name" >>"$T/accepted"
done
if [ "$ncases" -gt 200 ]; then ok; else bad "only $ncases cases found in $SUITE"; fi

# the accepted bad cases are the ones docs/conformance.md lists
sed -n 's/^| `\(bad_[A-Za-z0-9_]*\)` |.*/\1/p' "$DOC" | sort >"$T/documented"
sort "$T/accepted" >"$T/accepted.sorted"
if cmp -s "$T/accepted.sorted" "$T/documented"; then
	ok
else
	bad "the bad cases the tolerant mode accepts differ from $DOC (run tests/conformance/gen-doc.sh):"
	diff "$T/documented" "$T/accepted.sorted" | sed -n 's/^</    listed but rejected:/p; s/^>/    accepted but not listed:/p'
fi

# and the whole document (reasons, yielded values) is current
if command -v "${CC:-cc}" >/dev/null 2>&1; then
	if SHIM_BIN=$BIN sh tests/conformance/gen-doc.sh --check; then ok; else bad "$DOC is not up to date"; fi
else
	echo "SKIP: no C compiler for tests/conformance/gen-doc.sh --check"
fi

echo "$(wc -l <"$T/accepted") of the suite's bad cases are accepted by the tolerant mode"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
