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
# And on the calls: each src/*.c compiled to an object (cc -O0, into a temporary directory), `nm`
# lists the functions it defines (T, W: static functions are file-local and do not count) and the
# ones it uses from elsewhere (U). A function defined in one file and used in another is an edge
# from the user's file to the definer's; the rules:
#   5. a module calls only functions of its own layer or of a layer below it (no upward call);
#   6. the calls between files make no circle (two files calling each other, or a longer ring):
#      each circle is named with its files and, for every step, one function called that way.
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

# objects SRCDIR OBJDIR: every SRCDIR/*.c compiled to OBJDIR/NAME.o (two at a time), with the
# include paths of the Makefile's packages; a file that does not compile is named with the
# compiler's words, and the exit is 1.
objects() {
	mkdir -p "$2"
	pkgs=$(sed -n 's/^PKGS[ \t]*:=[ \t]*//p' Makefile)
	# shellcheck disable=SC2086 # one word a package
	cflags="-std=c11 -O0 -w -D_GNU_SOURCE -DSHIM_VERSION=\"0\" -DSHIM_SYSCONFDIR=\"/etc\" -I$1 $(pkg-config --cflags $pkgs 2>/dev/null)"
	# shellcheck disable=SC2016 # expanded by the sh that xargs runs
	find "$1" -maxdepth 1 -name '*.c' -print | sort |
		LAYERS_CFLAGS=$cflags LAYERS_CC=${CC:-cc} OBJDIR=$2 xargs -P 2 -I @ sh -c '
		o=$OBJDIR/$(basename "$1" .c).o
		$LAYERS_CC $LAYERS_CFLAGS -c -o "$o" "$1" 2>"$o.err" || { echo "$1 does not compile:"; cat "$o.err"; exit 1; }' _ @
}

# check_calls ORDER OBJDIR: rules 5 and 6 on the objects of OBJDIR (objects' output), every
# problem on a line of its own, naming the files, a function and its direction; exits 1 when there
# is one. ORDER is layer_order's output.
check_calls() {
	nm -A "$2"/*.o | awk -v where="$DOC" '
	FILENAME == ARGV[1] { layer[$1] = $2; next }
	{
		f = $1; sub(/\.o:.*/, "", f); sub(/.*\//, "", f)
		if (!(f in idx)) { idx[f] = ++nodes; name[nodes] = f }
		if ($(NF - 1) == "T" || $(NF - 1) == "W") def[$NF] = f
		else if ($(NF - 1) == "U") { nu++; user[nu] = f; used[nu] = $NF }
	}
	# "src/a.c calls fn() of src/b.c": one function of the edge a -> b (the first by name), and how
	# many more
	function step(a, b,    k) {
		k = idx[a] SUBSEP idx[b]
		return "src/" a ".c calls " fn[k] "() of src/" b ".c" (more[k] ? " (and " more[k] " more)" : "")
	}
	END {
		for (i = 1; i <= nu; i++) {
			if (!(used[i] in def) || def[used[i]] == user[i]) continue
			k = idx[user[i]] SUBSEP idx[def[used[i]]]
			if (!(k in fn)) { fn[k] = used[i]; nedges++ }
			else { more[k]++; if (used[i] < fn[k]) fn[k] = used[i] }
			reach[k] = 1
		}
		# rule 5: no call up the layers
		for (k in fn) {
			split(k, ab, SUBSEP); a = name[ab[1]]; b = name[ab[2]]
			if ((a in layer) && (b in layer) && layer[b] < layer[a]) {
				printf "%s upwards: %s is in layer %d, above %s (layer %d) in %s; a module calls only its own layer and the layers below\n", step(a, b), b, layer[b], a, layer[a], where
				bad = 1
			}
		}
		# rule 6: files that reach each other (the transitive closure of the calls) are a circle
		for (m = 1; m <= nodes; m++)
			for (i = 1; i <= nodes; i++)
				if ((i, m) in reach)
					for (j = 1; j <= nodes; j++)
						if ((m, j) in reach) reach[i, j] = 1
		for (i = 1; i <= nodes; i++) {
			if ((i in done) || !((i, i) in reach)) continue
			files = ""
			for (j = 1; j <= nodes; j++)
				if (((i, j) in reach) && ((j, i) in reach)) {
					ring[j] = i; done[j] = 1; files = files (files == "" ? "" : ", ") "src/" name[j] ".c"
				}
			# one way round it: breadth first from i, inside the circle, back to i
			split("", from); split("", seen); q[1] = i; head = 1; tail = 1; back = 0
			while (head <= tail && !back) {
				x = q[head++]
				for (j = 1; j <= nodes; j++) {
					if (ring[j] != i || !((x, j) in fn)) continue
					if (j == i) { back = x; break }
					if (!(j in seen)) { seen[j] = 1; from[j] = x; q[++tail] = j }
				}
			}
			path = step(name[back], name[i])
			for (x = back; x != i; x = from[x]) path = step(name[from[x]], name[x]) ", " path
			printf "circle of calls between %s: %s; split them by what they do so that the calls go one way\n", files, path
			bad = 1
		}
		if (!bad) printf "%d files, %d pairs of files with calls between them, no circle\n", nodes, nedges
		exit bad
	}' "$1" -
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

if objects src "$TMP/obj" >"$TMP/out" 2>&1; then
	if check_calls "$TMP/order" "$TMP/obj" >"$TMP/out" 2>&1; then
		ok "src/ calls: $(tail -1 "$TMP/out")"
	else
		bad "src/ calls against the layers:"
		sed 's/^/    /' "$TMP/out"
	fi
else
	bad "src/ does not compile for the call check:"
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

# made-up calls: top -> mid and other_mid (one layer) -> base; a static function of one name in
# two files is no call between them, nor a call inside a file
c=$TMP/calls
made_up "$c" top "mid other_mid" base
printf 'int mid_run(void);\nint other_mid_run(void);\nint top_run(void) { return mid_run() + other_mid_run(); }\n' >"$c/src/top.c"
printf 'int base_get(void);\nint other_mid_run(void);\nstatic int helper(void) { return 1; }\nint mid_run(void) { return base_get() + other_mid_run() + helper(); }\n' >"$c/src/mid.c"
printf 'int base_get(void);\nstatic int helper(void) { return 2; }\nint other_mid_run(void) { return base_get() + helper(); }\n' >"$c/src/other_mid.c"
printf 'int base_put(void) { return 0; }\nint base_get(void) { return base_put(); }\n' >"$c/src/base.c"
# call_tree DIR: compile DIR/src and check its calls
call_tree() { objects "$1/src" "$1/obj" && check_calls "$1/order" "$1/obj"; }
if call_tree "$c" >"$TMP/out" 2>&1; then ok "made-up calls that keep the rules: $(tail -1 "$TMP/out")"; else
	bad "made-up calls that keep the rules are refused"; sed 's/^/    /' "$TMP/out"; fi

cp -r "$c" "$TMP/cup" && rm -rf "$TMP/cup/obj"
printf 'int top_run(void);\nint base_up(void) { return top_run(); }\n' >>"$TMP/cup/src/base.c"
refused "upward call" 'src/base.c calls top_run() of src/top.c upwards: top is in layer 1, above base (layer 3)' call_tree "$TMP/cup"
cp -r "$c" "$TMP/ccirc" && rm -rf "$TMP/ccirc/obj"
printf 'int mid_more(void) { return 3; }\n' >>"$TMP/ccirc/src/mid.c"
printf 'int mid_more(void);\nint other_mid_back(void) { return mid_more(); }\n' >>"$TMP/ccirc/src/other_mid.c"
refused "two files of one layer calling each other" 'circle of calls between src/mid.c, src/other_mid.c: src/mid.c calls other_mid_run() of src/other_mid.c, src/other_mid.c calls mid_more() of src/mid.c' call_tree "$TMP/ccirc"
# a ring of three files in one layer, each step named; rb_g is a second function of rc -> rb
made_up "$TMP/ring" "ra rb rc"
printf 'int rb_f(void);\nint ra_f(void) { return rb_f(); }\n' >"$TMP/ring/src/ra.c"
printf 'int rc_f(void);\nint rb_f(void) { return rc_f(); }\nint rb_g(void) { return 0; }\n' >"$TMP/ring/src/rb.c"
printf 'int ra_f(void);\nint rb_g(void);\nint rc_f(void) { return ra_f() + rb_g(); }\n' >"$TMP/ring/src/rc.c"
refused "a ring of three files" 'circle of calls between src/ra.c, src/rb.c, src/rc.c: src/ra.c calls rb_f() of src/rb.c, src/rb.c calls rc_f() of src/rc.c, src/rc.c calls ra_f() of src/ra.c' call_tree "$TMP/ring"

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

# the real tree with one upward call: the bottom layer's first module calls a function of the
# highest module that defines one (main() aside); only that file compiled again
if [ -f "$r/$low.c" ] && [ -d "$TMP/obj" ]; then
	hf=$(while read -r m l; do
		[ -f "$TMP/obj/$m.o" ] && nm --defined-only "$TMP/obj/$m.o" | awk '$2 == "T" && $3 != "main" { print $3; exit }'
	done <"$TMP/order" | head -1)
	hm=$(nm -A --defined-only "$TMP"/obj/*.o | awk -v f="$hf" '$2 == "T" && $3 == f { sub(/\.o:.*/, "", $1); sub(/.*\//, "", $1); print $1 }')
	mkdir -p "$TMP/rcall/src"
	cp -r "$TMP/obj" "$TMP/rcall/obj"
	{ cat "src/$low.c"; printf 'void %s(void);\nvoid layers_up(void);\nvoid layers_up(void) { %s(); }\n' "$hf" "$hf"; } >"$TMP/rcall/src/$low.c"
	cp src/*.h "$TMP/rcall/src/"
	rm -f "$TMP/rcall/obj/$low.o"
	# one_more DIR: DIR/src compiled, its object added to DIR/obj (the rest of src/), the calls checked
	one_more() { objects "$1/src" "$1/new" && cp "$1"/new/*.o "$1/obj/" && check_calls "$TMP/order" "$1/obj"; }
	refused "src/ with $low.c calling $hf()" "src/$low.c calls $hf() of src/$hm.c upwards" one_more "$TMP/rcall"
fi

echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
