#!/bin/sh
# tests/test_layers.sh: the layering of src/ as a tested fact. docs/architecture.md lists the
# modules in layers, top first (its ```layers block: one layer a line, its modules separated by
# spaces). A module is src/NAME.c and src/NAME.h. The rules, checked on every #include "..." of
# src/:
#   1. a module includes only headers of its own layer or of a layer below it (no upward include);
#   2. the includes make no cycle (inside a layer either);
#   3. a private header NAME_int.h (part of module NAME) is included only by NAME and NAME_*;
#   4. every module of src/ is in exactly one layer, every module listed has a file, and every
#      included header is in src/.
# The checker is then run on trees that break each rule (made up, and src/ with one bad include
# added), which it must refuse: a test that cannot fail proves nothing.
# Run from the repository root: sh tests/test_layers.sh. Last line "N passed, M failed".
set -u

DOC=${LAYERS_DOC:-docs/architecture.md}
PASS=0
FAIL=0
TMP=$(mktemp -d) || exit 1
trap 'rm -rf "$TMP"' EXIT

. tests/lib.sh # ok, bad, refused

# layer_order DOC: "module layer" lines from DOC's ```layers block (layer 1 is the top).
layer_order() {
	awk '/^```layers[ \t]*$/ { on = 1; next }
	     on && /^```/ { exit }
	     on { sub(/#.*/, ""); if (NF) { n++; for (i = 1; i <= NF; i++) print $i, n } }' "$1"
}

# check ORDER SRCDIR: every problem on a line of its own, naming the file and what to do; exits 1
# when there is one. ORDER is layer_order's output.
check_layers() {
	order=$1
	src=$2
	edges=$TMP/edges.$$
	: >"$edges"
	awk -v edges="$edges" -v where="$DOC" '
	# the module of a file: src/NAME.c, src/NAME.h and the private src/NAME_int.h are module NAME
	function mod(path,    m) { m = path; sub(/.*\//, "", m); sub(/\.[ch]$/, "", m); sub(/_int$/, "", m); return m }
	BEGIN {
		for (i = 2; i < ARGC; i++) { present[ARGV[i]] = 1; base = ARGV[i]; sub(/.*\//, "", base); file[base] = 1 }
	}
	FILENAME == ARGV[1] {
		if ($1 in layer) { printf "%s: module %s is listed twice in the layer order\n", where, $1; bad = 1 }
		layer[$1] = $2; nlayers = $2
		next
	}
	/^[ \t]*#[ \t]*include[ \t]*"/ {
		h = $0; sub(/^[^"]*"/, "", h); sub(/".*$/, "", h)
		t = mod(h); m = mod(FILENAME)
		if (!(h in file)) { printf "%s:%d: includes \"%s\", which is not in src/\n", FILENAME, FNR, h; bad = 1; next }
		if (t == m) next
		print m, t > edges
		if (h ~ /_int\.h$/) {
			owner = t
			if (index(m, owner "_") != 1) {
				printf "%s:%d: includes \"%s\", the private header of %s and %s_*: use a public header (or move the code into that module)\n", FILENAME, FNR, h, owner, owner; bad = 1
			}
		}
		if ((m in layer) && (t in layer) && layer[t] < layer[m]) {
			printf "%s:%d: includes \"%s\" upwards: %s is in layer %d, above %s (layer %d) in %s; a module includes only its own layer and the layers below\n", FILENAME, FNR, h, t, layer[t], m, layer[m], where; bad = 1
		}
		n++
	}
	END {
		for (i = 2; i < ARGC; i++) {
			m = mod(ARGV[i]); seen[m] = 1
			if (!(m in layer) && !(m in told)) {
				told[m] = 1; bad = 1
				printf "%s: module %s is in no layer of %s (its ```layers block): add it to the layer of the modules it is used with, below every module that includes it and above every module it includes\n", ARGV[i], m, where
			}
		}
		for (m in layer) if (!(m in seen)) { printf "%s: module %s of the layer order has no src/%s.c or src/%s.h: remove it\n", where, m, m, m; bad = 1 }
		if (!bad) printf "%d modules in %d layers, %d includes between modules\n", length(seen), nlayers, n
		exit bad
	}' "$order" "$src"/*.c "$src"/*.h
	rc=$?
	# tsort refuses a cycle, and names its modules
	if ! sort -u "$edges" | tsort >/dev/null 2>"$TMP/tsort.err"; then
		printf 'include cycle between modules: %s\n' "$(sed -n 's/^tsort: //p' "$TMP/tsort.err" | grep -v 'input contains a loop' | tr '\n' ' ')"
		rc=1
	fi
	rm -f "$edges"
	return $rc
}

# expect_refused NAME ORDER SRCDIR WORDS: the checker refuses the tree, saying WORDS
expect_refused() { refused "$1" "$4" check_layers "$2" "$3"; }

# --- the tree ----------------------------------------------------------------------------------

layer_order "$DOC" >"$TMP/order"
if [ ! -s "$TMP/order" ]; then
	bad "$DOC has no \`\`\`layers block"
else
	ok "$DOC: $(awk 'END { print $2 }' "$TMP/order") layers, $(wc -l <"$TMP/order") modules"
fi
if check_layers "$TMP/order" src >"$TMP/out" 2>&1; then
	ok "src/: $(tail -1 "$TMP/out")"
else
	bad "src/ breaks the layer order:"
	sed 's/^/    /' "$TMP/out"
fi

# --- trees the checker must refuse -------------------------------------------------------------

# made_up DIR LAYER...: DIR/order from a ```layers block of the layers given
made_up() {
	d=$1
	shift
	mkdir -p "$d/src"
	{ echo '```layers'; for l in "$@"; do echo "$l"; done; echo '```'; } >"$d/doc.md"
	layer_order "$d/doc.md" >"$d/order"
}

t=$TMP/made
made_up "$t" top "mid other_mid" base
printf '#include "mid.h"\n#include "base.h"\n' >"$t/src/top.c"
printf '#include "base.h"\n' >"$t/src/mid.h"
printf '#include "mid.h"\n#include "other_mid.h"\n' >"$t/src/mid.c"
printf '#include "base.h"\n' >"$t/src/other_mid.h"
printf '#include "base_int.h"\n' >"$t/src/base.c"
: >"$t/src/base.h"
: >"$t/src/base_int.h"
if check_layers "$t/order" "$t/src" >"$TMP/out" 2>&1; then ok "a made-up tree that keeps the rules"; else
	bad "a made-up tree that keeps the rules is refused"; sed 's/^/    /' "$TMP/out"; fi

cp -r "$t" "$TMP/up" && printf '#include "top.h"\n' >>"$TMP/up/src/mid.c" && : >"$TMP/up/src/top.h"
expect_refused "upward include" "$TMP/up/order" "$TMP/up/src" 'includes "top.h" upwards'
cp -r "$t" "$TMP/cyc" && printf '#include "mid.h"\n' >>"$TMP/cyc/src/other_mid.h"
expect_refused "cycle inside a layer" "$TMP/cyc/order" "$TMP/cyc/src" 'include cycle between modules: .*mid'
cp -r "$t" "$TMP/priv" && printf '#include "base_int.h"\n' >>"$TMP/priv/src/mid.c"
expect_refused "private header" "$TMP/priv/order" "$TMP/priv/src" 'the private header of base'
cp -r "$t" "$TMP/new" && : >"$TMP/new/src/newmod.c"
expect_refused "module in no layer" "$TMP/new/order" "$TMP/new/src" 'module newmod is in no layer'
cp -r "$t" "$TMP/gone" && rm "$TMP/gone/src/other_mid.h" && sed -i 's/#include "other_mid.h"//' "$TMP/gone/src/mid.c"
expect_refused "module listed without a file" "$TMP/gone/order" "$TMP/gone/src" 'module other_mid of the layer order has no'
cp -r "$t" "$TMP/miss" && printf '#include "nowhere.h"\n' >>"$TMP/miss/src/top.c"
expect_refused "header not in src/" "$TMP/miss/order" "$TMP/miss/src" '"nowhere.h", which is not in src/'
cp -r "$t" "$TMP/twice" && made_up "$TMP/twice" top "mid other_mid" "base mid"
expect_refused "module in two layers" "$TMP/twice/order" "$TMP/twice/src" 'module mid is listed twice'

# the real tree with one bad include: the bottom layer's first module includes the top layer's
r=$TMP/real
mkdir -p "$r"
cp src/*.c src/*.h "$r/"
low=$(awk 'END { print $1 }' "$TMP/order")
# the highest module with a header
hh=$(while read -r m l; do if [ -f "src/$m.h" ]; then echo "$m.h"; break; fi; done <"$TMP/order")
f=$r/$low.c
[ -f "$f" ] || f=$r/$low.h
printf '#include "%s"\n' "$hh" >>"$f"
expect_refused "src/ with $(basename "$f") including $hh" "$TMP/order" "$r" "includes \"$hh\" upwards"

echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
