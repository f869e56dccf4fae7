#!/bin/sh
# Checks that the man page and --help agree on the option set.
#   1. every --flag token printed by "$SHIM_BIN --help" appears in the rendered
#      man page;
#   2. every flag that starts a --help line ("  --flag ...") has its own entry
#      in the man page's OPTIONS section;
#   3. every option entry in the man page's OPTIONS section is a --flag that
#      "$SHIM_BIN --help" prints;
#   4. (rendered with man) each flag's entry agrees with its --help line, which
#      src/options.c writes from the flag table: the same metavar, the
#      "Default:" of the --help "(default X)", and the range "N to M".
# Run from the repository root:
#   SHIM_BIN=./slurm-exporter-shim sh tests/test_manpage.sh
# The last line is "N passed, M failed"; the exit status is non-zero on failure.
set -u

SHIM_BIN=${SHIM_BIN:-./slurm-exporter-shim}
MANPAGE=${MANPAGE:-docs/slurm-exporter-shim.1}

if [ ! -f "$SHIM_BIN" ] || [ ! -x "$SHIM_BIN" ]; then
  echo "test_manpage: $SHIM_BIN does not exist or is not executable; build it first (make)" >&2
  echo "0 passed, 1 failed"
  exit 1
fi
if [ ! -f "$MANPAGE" ]; then
  echo "test_manpage: $MANPAGE not found (run from the repository root)" >&2
  echo "0 passed, 1 failed"
  exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_manpage.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT HUP INT TERM

# Render the page as plain ASCII. Wide lines keep each flag on one line;
# the page sets .nh, so no flag is hyphenated. Without man(1), fall back to
# the raw roff with the escapes that can occur inside a flag undone.
unset MAN_KEEP_FORMATTING
if command -v man >/dev/null 2>&1 &&
   LC_ALL=C MANWIDTH=200 MANPAGER=cat PAGER=cat man -l "$MANPAGE" >"$tmp/man.raw" 2>"$tmp/man.err" &&
   [ -s "$tmp/man.raw" ]; then
  # drop any backspace overstriking (bold/underline) that a man(1) may leave
  bs=$(printf '\b')
  sed -e "s/.$bs//g" "$tmp/man.raw" >"$tmp/man.txt"
  render="man"
else
  render="roff"
  sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\%//g' -e 's/\\&//g' \
    "$MANPAGE" >"$tmp/man.txt"
fi

# help: "$SHIM_BIN --help" (stdout and stderr; some programs print usage on stderr)
help_rc=0
"$SHIM_BIN" --help >"$tmp/help.txt" 2>&1 || help_rc=$?

# tokens FILE: every --flag token, one per line, sorted and unique. A flag is
# "--" then a letter, then letters, digits, '.', '_' or '-'. A trailing '.'
# (end of sentence) and a trailing "=..." are not part of it.
tokens() {
  awk '{
    line = $0
    while (match(line, /--[A-Za-z][A-Za-z0-9._-]*/)) {
      t = substr(line, RSTART, RLENGTH)
      # a token glued to something before it (e.g. "x--y") is not a flag
      if (RSTART > 1 && substr(line, RSTART - 1, 1) ~ /[A-Za-z0-9_-]/) {
        line = substr(line, RSTART + RLENGTH); continue
      }
      sub(/[.]+$/, "", t)
      print t
      line = substr(line, RSTART + RLENGTH)
    }
  }' "$1" | sort -u
}

# man_options FILE: the option tags of the OPTIONS section of the rendered
# page: lines indented by 7 spaces that start with "--" and follow a blank
# line (a wrapped line of running text does not), up to the next section
# heading (a line starting with a capital letter in column 1).
man_options_rendered() {
  awk '
    /^[A-Z][A-Z ]*$/ { in_opt = ($0 == "OPTIONS"); blank = 0; next }
    in_opt && blank && /^       --/ { print $1 }
    { blank = ($0 ~ /^[ \t]*$/) }
  ' "$1" | sed -e 's/\[.*$//' -e 's/=.*$//' | sort -u
}
# the same from raw roff: the line after each .TP in the OPTIONS section
man_options_roff() {
  awk '
    /^\.SH/ { in_opt = ($2 == "OPTIONS"); next }
    in_opt && /^\.TP/ { want = 1; next }
    in_opt && want { want = 0; for (i = 1; i <= NF; i++) if ($i ~ /^--/) { print $i; break } }
  ' "$1" | sed -e 's/\[.*$//' -e 's/=.*$//' -e 's/"//g' | sort -u
}

tokens "$tmp/help.txt" >"$tmp/help.flags"
# flags that start a help line: two spaces, then the flag
sed -n 's/^  \(--[A-Za-z][A-Za-z0-9._-]*\).*/\1/p' "$tmp/help.txt" | sort -u >"$tmp/help.options"
tokens "$tmp/man.txt" >"$tmp/man.flags"
if [ "$render" = man ]; then
  man_options_rendered "$tmp/man.txt" >"$tmp/man.options"
else
  man_options_roff "$tmp/man.txt" >"$tmp/man.options"
fi

pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

if [ "$help_rc" -ne 0 ]; then
  bad "$SHIM_BIN --help exited with status $help_rc (expected 0)"
else
  ok
fi
if [ -s "$tmp/help.flags" ]; then ok; else bad "$SHIM_BIN --help printed no --flag"; fi
if [ -s "$tmp/man.options" ]; then ok; else bad "no option tags found in the OPTIONS section of $MANPAGE ($render)"; fi
if [ "$render" = man ] && [ -s "$tmp/man.err" ]; then
  bad "man -l $MANPAGE printed warnings: $(head -n 3 "$tmp/man.err")"
fi

# 1. every --help flag is in the man page
while IFS= read -r f; do
  if grep -qxF -- "$f" "$tmp/man.flags"; then ok; else bad "'$f' is in --help but not in $MANPAGE"; fi
done <"$tmp/help.flags"

# 2. every --help option has an entry in the man page's OPTIONS
while IFS= read -r f; do
  if grep -qxF -- "$f" "$tmp/man.options"; then ok; else bad "'$f' starts a --help line but has no entry in the OPTIONS of $MANPAGE"; fi
done <"$tmp/help.options"

# 3. every man page option is in --help
while IFS= read -r f; do
  if grep -qxF -- "$f" "$tmp/help.flags"; then ok; else bad "'$f' is in the OPTIONS of $MANPAGE but not in --help"; fi
done <"$tmp/man.options"

# 4. per flag, the man page entry against the --help line (metavar, default, range)
# man_entries FILE: "flag<TAB>tag line<TAB>the entry's text joined on one line"
man_entries() {
  awk '
    function flush() { if (flag != "") { gsub(/[ \t]+/, " ", body); print flag "\t" tag "\t" body }; flag = "" }
    /^[A-Z][A-Z ]*$/ { flush(); in_opt = ($0 == "OPTIONS"); blank = 0; next }
    in_opt && blank && /^       --/ { flush(); flag = $1; sub(/\[.*$/, "", flag); tag = $0; sub(/^ +/, "", tag); body = ""; blank = 0; next }
    in_opt && flag != "" { body = body " " $0 }
    { blank = ($0 ~ /^[ \t]*$/) }
    END { flush() }
  ' "$1"
}
if [ "$render" = man ]; then
  man_entries "$tmp/man.txt" >"$tmp/man.entries"
  while IFS= read -r line; do
    f=$(printf '%s\n' "$line" | sed -n 's/^  \(--[A-Za-z][A-Za-z0-9._-]*\).*/\1/p')
    [ -n "$f" ] || continue
    entry=$(awk -F '\t' -v f="$f" '$1 == f' "$tmp/man.entries")
    # the metavar: "  --flag METAVAR   help" (a metavar is upper case)
    meta=$(printf '%s\n' "$line" | sed -n 's/^  --[^ ]* \([A-Z][A-Z]*\) .*/\1/p')
    if [ -n "$meta" ]; then
      tag=$(printf '%s\n' "$entry" | cut -f2)
      if [ "$tag" = "$f $meta" ]; then ok; else bad "$f: the man page's tag is '$tag', --help says '$f $meta'"; fi
    fi
    def=$(printf '%s\n' "$line" | sed -n 's/.*default \(.*\))$/\1/p' | tr -d '"')
    if [ -n "$def" ]; then
      if printf '%s\n' "$entry" | grep -qF -- "Default: $def"; then ok; else bad "$f: --help says default $def, the man page's entry does not"; fi
    fi
    range=$(printf '%s\n' "$line" | sed -n 's/.*(\([0-9.]* to [0-9.]*\), default .*/\1/p')
    if [ -n "$range" ]; then
      if printf '%s\n' "$entry" | grep -qF -- "$range"; then ok; else bad "$f: --help gives the range $range, the man page's entry does not"; fi
    fi
  done <"$tmp/help.txt"
else
  echo "test_manpage: no man(1): metavars, defaults and ranges not compared"
fi

echo "test_manpage: $(wc -l <"$tmp/help.flags" | tr -d ' ') flags in --help, $(wc -l <"$tmp/man.options" | tr -d ' ') options in the man page (rendered with $render)"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
