#!/bin/sh
# tests/test_source_shape.sh: the size rules of src/ as a tested fact (docs/architecture.md,
# "Conventions"): no file of src/ over 900 lines and no function over 100 lines, counted from the
# line that names the function to its closing brace. A function is found as the tree writes one: its
# name at the start of a line (the line holding its '(') and its body from a '{' to a '}' at the
# start of a line (or '{' at the end of the line that closes its parameters).
# The checker is then run on copies of src/ that break each rule, which it must refuse naming the
# file and the function: a test that cannot fail proves nothing.
# The tests' own files (tests/, C, headers and scripts) are held to 1,500 lines each: a test file
# longer than that is split by concern (as tests/test_http_*.c are).
# Run from the repository root: sh tests/test_source_shape.sh. Last line "N passed, M failed".
set -u

MAX_FILE_LINES=900
MAX_FUNCTION_LINES=100
MAX_TEST_FILE_LINES=1500
PASS=0
FAIL=0
TMP=$(mktemp -d) || exit 1
trap 'rm -rf "$TMP"' EXIT

. tests/lib.sh # ok, bad, refused

# check SRCDIR: every file or function over its limit on a line of its own, naming the file (and
# line) and the function; exits 1 when there is one, else prints what it counted.
check_shape() {
	awk -v maxf="$MAX_FILE_LINES" -v maxfn="$MAX_FUNCTION_LINES" '
	function flush_file() {
		if (FILENAME_prev != "" && lines > maxf) {
			printf "%s: %d lines, over %d: split it into modules (docs/architecture.md)\n", FILENAME_prev, lines, maxf
			bad = 1
		}
	}
	FNR == 1 { flush_file(); FILENAME_prev = FILENAME; files++; infn = 0; sig = 0 }
	{ lines = FNR }
	# a line that may name a function: an identifier at the start of the line, and its "("
	!infn && /^[A-Za-z_]/ && /\(/ {
		sig = FNR; name = $0
		gsub(/__attribute__[ \t]*\(\([^()]*(\([^()]*\))?[^()]*\)\)/, "", name)
		sub(/\(.*/, "", name); sub(/.*[^A-Za-z0-9_]/, "", name)
	}
	# the body: "{" alone at the start of a line, or at the end of the line closing the parameters
	!infn && (/^\{/ || (/^[A-Za-z_]/ && /\)[ \t]*\{[ \t]*$/)) {
		infn = 1; start = sig ? sig : FNR; fname = name; next
	}
	infn && /^\}/ {
		infn = 0; sig = 0; n = FNR - start + 1; fns++
		if (n > longest) longest = n
		if (n > maxfn) {
			printf "%s:%d: function %s is %d lines, over %d: cut it into named steps\n", FILENAME, start, fname, n, maxfn
			bad = 1
		}
	}
	END {
		flush_file()
		if (!bad) printf "%d files, %d functions, the longest %d lines\n", files, fns, longest
		exit bad
	}' "$1"/*.c "$1"/*.h
}

# check_test_files DIR: every C file, header, shell or Python script below DIR over
# MAX_TEST_FILE_LINES, named on a line of its own; exits 1 when there is one.
check_test_files() {
	find "$1" -type f \( -name '*.c' -o -name '*.h' -o -name '*.sh' -o -name '*.py' \) -exec wc -l {} + |
		awk -v max="$MAX_TEST_FILE_LINES" '$2 != "total" && $1 > max {
			printf "%s: %d lines, over %d: split it by concern (tests/README.md)\n", $2, $1, max; bad = 1 }
		$2 != "total" { n++ } END { if (!bad) printf "%d test files, none over %d lines\n", n, max; exit bad }'
}

# expect_refused NAME SRCDIR WORDS: the checker refuses the tree, saying WORDS
expect_refused() { refused "$1" "$3" check_shape "$2"; }

# --- the tree ----------------------------------------------------------------------------------

if check_shape src >"$TMP/out" 2>&1; then
	ok "src/: $(tail -1 "$TMP/out")"
else
	bad "src/ breaks the size rules:"
	sed 's/^/    /' "$TMP/out"
fi

if check_test_files tests >"$TMP/out" 2>&1; then
	ok "tests/: $(tail -1 "$TMP/out")"
else
	bad "tests/ has a file over $MAX_TEST_FILE_LINES lines:"
	sed 's/^/    /' "$TMP/out"
fi
mkdir -p "$TMP/tests-big/sub"
awk -v n="$MAX_TEST_FILE_LINES" 'BEGIN { for (i = 0; i < n; i++) print "/* */" }' >"$TMP/tests-big/sub/test_fits.c"
if check_test_files "$TMP/tests-big" >"$TMP/out" 2>&1; then ok "a test file of exactly $MAX_TEST_FILE_LINES lines is accepted"
else bad "a test file of exactly $MAX_TEST_FILE_LINES lines is refused"; sed 's/^/    /' "$TMP/out"; fi
echo '/* one over */' >>"$TMP/tests-big/sub/test_fits.c"
refused "a test file one line over" "sub/test_fits.c: $((MAX_TEST_FILE_LINES + 1)) lines, over $MAX_TEST_FILE_LINES" check_test_files "$TMP/tests-big"

# --- copies of src/ the checker must refuse ----------------------------------------------------

# body N: N lines of a function body
body() {
	i=0
	while [ "$i" -lt "$1" ]; do echo "	x += $i;"; i=$((i + 1)); done
}

# copy NAME: a fresh copy of src/ in $TMP/NAME
copy() {
	rm -rf "${TMP:?}/$1"
	mkdir -p "$TMP/$1"
	cp src/*.c src/*.h "$TMP/$1/"
}

# the longest function allowed: signature, "{", the body, "return", "}" = 101 lines is one over
copy fits
{ echo; echo 'static int shape_fits(int x)'; echo '{'; body $((MAX_FUNCTION_LINES - 4)); echo '	return x;'; echo '}'; } >>"$TMP/fits/buf.c"
check_shape "$TMP/fits" >"$TMP/out" 2>&1
if grep -q shape_fits "$TMP/out"; then bad "a function of exactly $MAX_FUNCTION_LINES lines is refused"; sed 's/^/    /' "$TMP/out"
else ok "a function of exactly $MAX_FUNCTION_LINES lines is accepted"; fi

copy long
{ echo; echo 'static int shape_too_long(int x)'; echo '{'; body $((MAX_FUNCTION_LINES - 3)); echo '	return x;'; echo '}'; } >>"$TMP/long/buf.c"
expect_refused "a function one line over" "$TMP/long" "buf.c:[0-9]*: function shape_too_long is $((MAX_FUNCTION_LINES + 1)) lines"

copy sig
{ echo; echo 'static int'; echo 'shape_split_signature(int x,'; echo '		      int y)'; echo '{'; body "$MAX_FUNCTION_LINES"; echo '	return x + y;'; echo '}'; } >>"$TMP/sig/log.c"
expect_refused "a signature over two lines" "$TMP/sig" "log.c:[0-9]*: function shape_split_signature is"

copy kr
{ echo; echo 'static int shape_brace_on_signature(int x) {'; body "$MAX_FUNCTION_LINES"; echo '	return x;'; echo '}'; } >>"$TMP/kr/utf8.c"
expect_refused "a brace on the signature's line" "$TMP/kr" "utf8.c:[0-9]*: function shape_brace_on_signature is"

copy attr
{ echo; echo '__attribute__((format(printf, 1, 2))) static int shape_attr(const char *fmt, ...)'; echo '{'; body "$MAX_FUNCTION_LINES"; echo '	return 0;'; echo '}'; } >>"$TMP/attr/xmalloc.c"
expect_refused "an attribute before the name" "$TMP/attr" "xmalloc.c:[0-9]*: function shape_attr is"

# a file one line over the limit: the longest file of src/ grown to 901 lines
big=$(wc -l src/*.c src/*.h | grep -v ' total$' | sort -rn | head -1 | awk '{ print $2 }')
copy file
n=$(wc -l <"$big")
i=$n
while [ "$i" -le "$MAX_FILE_LINES" ]; do echo "/* $i */"; i=$((i + 1)); done >>"$TMP/file/$(basename "$big")"
expect_refused "$(basename "$big") grown to $((MAX_FILE_LINES + 1)) lines" "$TMP/file" "$(basename "$big"): $((MAX_FILE_LINES + 1)) lines, over $MAX_FILE_LINES"

echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
