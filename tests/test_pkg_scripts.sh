#!/bin/sh
# The package scripts against hostile files and arguments: packaging/enable-slurmrestd and
# packaging/migrate-legacy-args (what the .deb's postinst and the RPM's %post run) rewriting
# /etc/default/slurm-exporter-shim when it is a symlink (to a root-owned 0600 file, to nothing, into a
# directory another user can write or owns), world-writable or of another owner; the old exporter's
# ARGS with a carriage return, an escape, a NUL, a line feed in a quote, tabs, a CRLF file, lines
# continued with a backslash, a bidi control character, and a listen address given twice;
# packaging/run-slurmrestd's -u/-g inside combined short options. Each in a temporary root (ROOT=...,
# a stub systemctl on PATH), as root when run so (the owner cases need root, and are skipped
# otherwise). PKG (default packaging) is the directory of the scripts under test, so that the same
# cases can be run against an older copy. Needs python3 (the stub systemctl makes the unit's socket).
# The last line is "N passed, M failed".
set -u
cd "$(dirname "$0")/.." || exit 1
PKG=${PKG:-packaging}
ENABLE=$PKG/enable-slurmrestd
MIGRATE=$PKG/migrate-legacy-args
RUN=$PKG/run-slurmrestd
SOCK=/run/slurm-exporter-shim-slurmrestd/slurmrestd.sock
URL_FLAG=--slurmrestd.url=unix:$SOCK
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   - $*"; }
bad() { failed=$((failed + 1)); echo "FAIL - $*"; }
show() { sed 's/^/       | /' "$1" | cat -v; }
root_only() { [ "$(id -u)" = 0 ] || { echo "skip - $1 (needs root)"; return 1; }; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_pkg_scripts.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
r=$tmp/root
D=$r/etc/default/slurm-exporter-shim
cr=$(printf '\r')
esc=$(printf '\033')
tab=$(printf '\t')

mkdir -p "$tmp/bin"
cp tests/stub-systemctl "$tmp/bin/systemctl" # logs each call, makes the unit's socket
chmod 755 "$tmp/bin/systemctl"

# fresh: a root with both defaults files as shipped, a stub slurmrestd, the pristine copy
fresh() {
	rm -rf "$r" "$tmp/systemctl.log" "$tmp/site"
	mkdir -p "$r/etc/default" "$r/usr/sbin" "$r/usr/share/slurm-exporter-shim" "$r/etc/sysconfig" "$r/etc/systemd/system"
	cp packaging/default/slurm-exporter-shim "$D"
	cp packaging/default/slurm-exporter-shim "$r/usr/share/slurm-exporter-shim/default.dist"
	cp packaging/default/slurm-exporter-shim-slurmrestd "$r/etc/default/slurm-exporter-shim-slurmrestd"
	printf '#!/bin/sh\nexit 0\n' >"$r/usr/sbin/slurmrestd"
	chmod 755 "$r/usr/sbin/slurmrestd"
	chmod 644 "$D"
	: >"$tmp/systemctl.log"
}
# link_defaults TARGET: the defaults file becomes a symlink to TARGET (its content the shipped file's
# unless TARGET is to be missing: then nothing is made there)
link_defaults() {
	rm -f "$D"
	ln -s "$1" "$D"
}
en() {
	ROOT=$r STUB_LOG=$tmp/systemctl.log SOCKET_WAIT=1 PATH="$tmp/bin:$PATH" sh "$ENABLE" "$@" >"$tmp/out" 2>&1
	rc=$?
}
mig() {
	ROOT=$r PATH="$tmp/bin:$PATH" sh "$MIGRATE" "$@" >"$tmp/out" 2>&1
	rc=$?
}
said() {
	if grep -qF -- "$2" "$tmp/out"; then ok "$1: says '$2'"; else bad "$1: does not say '$2'"; show "$tmp/out"; fi
}
# st FILE: "owner:group mode" of FILE itself
st() { stat -c '%u:%g %a' -- "$1"; }
is_link_to() { [ -L "$1" ] && [ "$(readlink -- "$1")" = "$2" ]; }
# no_leftover DIR: no temporary file of a script left in DIR
no_leftover() { [ -z "$(find "$1" -maxdepth 1 \( -name '.*.??????' -o -name '*.enable-slurmrestd.*' -o -name '*.migrate.*' \) -print)" ]; }
# sane FILE: every line printable ASCII or a tab (no CR, escape, NUL, bidi control)
sane() { ! LC_ALL=C grep -q -a -n "[^$tab -~]" "$1"; }

# link_to_0600: the defaults file becomes a symlink to a copy of it, root's (the runner's), mode 0600
link_to_0600() {
	mkdir -p "$tmp/site"
	cp "$D" "$tmp/site/shim"
	chmod 600 "$tmp/site/shim"
	link_defaults "$tmp/site/shim"
}
# followed NAME WANT: the script went through the symlink of link_to_0600: exit 0, the link kept, its
# target holds the line WANT with its owner and mode 0600, no temporary file left
followed() {
	if [ "$rc" = 0 ] && is_link_to "$D" "$tmp/site/shim" && [ "$(st "$tmp/site/shim")" = "$(id -u):$(id -g) 600" ] &&
		grep -qxF -- "$2" "$tmp/site/shim"; then
		ok "$1: followed, the link kept, the target rewritten with its owner and mode 0600"
	else
		bad "$1: exit $rc, $D: $(st "$D") $(readlink "$D"), target: $(st "$tmp/site/shim" 2>&1)"
		show "$tmp/out"
	fi
	said "$1" "is a symlink to $tmp/site/shim: that file is the one written"
	no_leftover "$tmp/site" && no_leftover "$r/etc/default" && ok "$1: no temporary file left" || bad "$1: a temporary file left"
}

# ------------------------------------------------------------------ enable-slurmrestd: symlinks
fresh
link_to_0600
en
followed "enable-slurmrestd, the defaults file a symlink to a root-owned 0600 file" "ARGS=\"$URL_FLAG\""

fresh
link_defaults "$tmp/site/missing"
en
name="enable-slurmrestd, the defaults file a symlink to nothing"
if [ "$rc" = 1 ] && is_link_to "$D" "$tmp/site/missing" && [ ! -e "$tmp/site/missing" ] && [ ! -s "$tmp/systemctl.log" ]; then
	ok "$name: refused (exit 1), nothing created through it, systemctl never called"
else
	bad "$name: exit $rc, $D $(ls -l "$D"), target exists: $([ -e "$tmp/site/missing" ] && echo yes)"
	show "$tmp/out"
fi
said "$name" "$D is a symlink to $tmp/site/missing, which does not exist: refused"

fresh
mkdir -p "$tmp/site/open"
chmod 777 "$tmp/site/open"
cp "$D" "$tmp/site/open/shim"
cp "$D" "$tmp/before"
link_defaults "$tmp/site/open/shim"
en
name="enable-slurmrestd, the defaults file a symlink into a directory every user can write"
if [ "$rc" = 1 ] && cmp -s "$tmp/before" "$tmp/site/open/shim" && is_link_to "$D" "$tmp/site/open/shim" &&
	[ ! -s "$tmp/systemctl.log" ]; then
	ok "$name: refused (exit 1) before anything is done, the file unchanged"
else
	bad "$name: exit $rc, or the file changed, or systemctl called ($(paste -sd ';' "$tmp/systemctl.log"))"
	show "$tmp/out"
fi
said "$name" "$tmp/site/open is writable by other users (mode 0777): refused"

if root_only "enable-slurmrestd, a symlink into a directory another user owns"; then
	fresh
	mkdir -p "$tmp/site/nobody"
	cp "$D" "$tmp/site/nobody/shim"
	cp "$D" "$tmp/before"
	chown -R 65534:65534 "$tmp/site/nobody"
	link_defaults "$tmp/site/nobody/shim"
	en
	name="enable-slurmrestd, a symlink into a directory user 65534 owns"
	if [ "$rc" = 1 ] && cmp -s "$tmp/before" "$tmp/site/nobody/shim" && [ ! -s "$tmp/systemctl.log" ]; then
		ok "$name: refused (exit 1), the file unchanged"
	else
		bad "$name: exit $rc"
		show "$tmp/out"
	fi
	said "$name" "$tmp/site/nobody belongs to user 65534"

	fresh
	chown 65534:65534 "$D"
	chmod 640 "$D"
	en
	[ "$rc" = 0 ] && [ "$(st "$D")" = "65534:65534 640" ] && [ ! -L "$D" ] &&
		ok "enable-slurmrestd: the defaults file's owner (65534) and mode (0640) kept" ||
		{ bad "enable-slurmrestd: exit $rc, $(st "$D"), not 65534:65534 640"; show "$tmp/out"; }
fi

fresh
chmod 666 "$D"
ino=$(stat -c %i "$D")
en
name="enable-slurmrestd, a world-writable (0666) defaults file"
[ "$rc" = 0 ] && [ "$(st "$D")" = "$(id -u):$(id -g) 664" ] && ok "$name: written 0664, never world-writable" ||
	{ bad "$name: exit $rc, $(st "$D")"; show "$tmp/out"; }
said "$name" "was writable by every user (mode 0666): written with mode 0664"
[ "$(stat -c %i "$D")" != "$ino" ] && ok "enable-slurmrestd replaces the file (a new inode renamed over it), never writes it in place" ||
	bad "enable-slurmrestd wrote the defaults file in place"

# ------------------------------------------------------------------ enable-slurmrestd: ARGS content
for ch in "$cr" "$esc"; do
	fresh
	awk -v l="ARGS=\"--gpus-acct${ch}--log.level debug\"" '/^ARGS=""$/ { print l; next } { print }' packaging/default/slurm-exporter-shim >"$D"
	cp "$D" "$tmp/before"
	en
	name="enable-slurmrestd, ARGS with a carriage return inside"
	[ "$ch" = "$cr" ] || name="enable-slurmrestd, ARGS with an escape inside"
	if [ "$rc" = 1 ] && cmp -s "$tmp/before" "$D" && [ ! -s "$tmp/systemctl.log" ]; then
		ok "$name: refused (exit 1), unchanged, systemctl never called"
	else
		bad "$name: exit $rc (want 1, unchanged)"
		show "$tmp/out"
	fi
	said "$name" "has a control character"
done

fresh
awk '/^ARGS=""$/ { print "ARGS=\"--gpus-acct\"\r"; next } { print $0 "\r" }' packaging/default/slurm-exporter-shim >"$D"
en
name="enable-slurmrestd, a CRLF defaults file"
[ "$rc" = 0 ] && grep -qxF "ARGS=\"--gpus-acct $URL_FLAG\"" "$D" && ok "$name: ARGS rewritten (without its CR)" ||
	{ bad "$name: exit $rc"; show "$tmp/out"; }

# expect_mig NAME WANT: the migration done (exit 0), the defaults file's ARGS= line is ARGS=WANT, and
# every line of it printable
expect_mig() {
	if [ "$rc" = 0 ] && grep -qxF "ARGS=$2" "$D" && sane "$D"; then
		ok "$1: ARGS=$2"
	else
		bad "$1: exit $rc, not ARGS=$2 (or a control character written)"
		show "$tmp/out"
		grep -n '^ARGS=' "$D" | show /dev/stdin
	fi
}

# ------------------------------------------------------------------ migrate-legacy-args: symlinks
old_args() { printf '%s\n' "$1" >"$r/etc/default/prometheus-slurm-exporter"; }

fresh
old_args 'ARGS="-gpus-acct"'
link_to_0600
mig
followed "migrate-legacy-args, the defaults file a symlink to a root-owned 0600 file" 'ARGS="--gpus-acct"'

fresh
old_args 'ARGS="-gpus-acct"'
link_defaults "$tmp/site/missing"
mig
name="migrate-legacy-args, the defaults file a symlink to nothing"
if is_link_to "$D" "$tmp/site/missing" && [ ! -e "$tmp/site/missing" ]; then
	ok "$name: nothing created through it (exit $rc)"
else
	bad "$name: exit $rc, $D $(ls -l "$D")"
	show "$tmp/out"
fi
said "$name" "$D is a symlink to $tmp/site/missing, which does not exist: refused"

fresh
old_args 'ARGS="-gpus-acct"'
mkdir -p "$tmp/site/open"
chmod 777 "$tmp/site/open"
cp "$D" "$tmp/site/open/shim"
link_defaults "$tmp/site/open/shim"
mig
name="migrate-legacy-args, the defaults file a symlink into a directory every user can write"
if [ "$rc" = 1 ] && cmp -s packaging/default/slurm-exporter-shim "$tmp/site/open/shim" && is_link_to "$D" "$tmp/site/open/shim"; then
	ok "$name: refused (exit 1), the file unchanged"
else
	bad "$name: exit $rc, or the file changed"
	show "$tmp/out"
fi
said "$name" "$tmp/site/open is writable by other users (mode 0777): refused"

fresh
old_args 'ARGS="-gpus-acct"'
chmod 777 "$r/etc/default"
mig
name="migrate-legacy-args, /etc/default writable by every user"
[ "$rc" = 1 ] && cmp -s packaging/default/slurm-exporter-shim "$D" && ok "$name: refused (exit 1), the file unchanged" ||
	{ bad "$name: exit $rc, or the file changed"; show "$tmp/out"; }
chmod 755 "$r/etc/default"

if root_only "migrate-legacy-args, the defaults file's owner kept"; then
	fresh
	old_args 'ARGS="-gpus-acct"'
	chown 65534:65534 "$D"
	chmod 640 "$D"
	mig
	[ "$rc" = 0 ] && [ "$(st "$D")" = "65534:65534 640" ] && grep -qxF 'ARGS="--gpus-acct"' "$D" &&
		ok "migrate-legacy-args: the defaults file's owner (65534) and mode (0640) kept" ||
		{ bad "migrate-legacy-args: exit $rc, $(st "$D"), not 65534:65534 640"; show "$tmp/out"; }
fi

# ------------------------------------------------------------------ migrate-legacy-args: the old ARGS
# refused_mig NAME WORDS: the migration refused (exit 1, saying WORDS), the defaults file as shipped
refused_mig() {
	if [ "$rc" = 1 ] && cmp -s packaging/default/slurm-exporter-shim "$D" && grep -qF -- "$2" "$tmp/out"; then
		ok "$1: refused (exit 1), says '$2', nothing changed"
	else
		bad "$1: exit $rc (want 1, '$2' said, the defaults file unchanged)"
		show "$tmp/out"
		diff packaging/default/slurm-exporter-shim "$D" | show /dev/stdin
	fi
	sane "$D" || bad "$1: a control character written into the defaults file"
}
fresh
old_args "ARGS=\"-gpus-acct -bogus${cr}ARGS=--web.listen-address=:1\""
mig
refused_mig "old ARGS with a carriage return inside (a line to systemd)" "/etc/default/prometheus-slurm-exporter:1: a control character (shown as ^X: ARGS=\"-gpus-acct -bogus^MARGS="

fresh
old_args "ARGS=\"-gpus-acct -x${esc}[2J\""
mig
refused_mig "old ARGS with an escape" "/etc/default/prometheus-slurm-exporter:1: a control character"

fresh
printf '# the old exporter\nARGS="-gpus-acct -x\000y"\n' >"$r/etc/default/prometheus-slurm-exporter"
mig
refused_mig "old ARGS with a NUL" "/etc/default/prometheus-slurm-exporter:2: a control character"

fresh
printf '# x\n#%s comment\nARGS="-gpus-acct"\n' "$cr" >"$r/etc/sysconfig/prometheus-slurm-exporter"
mig
refused_mig "a carriage return in a comment of the old file" "/etc/sysconfig/prometheus-slurm-exporter:2: a control character"

fresh
printf 'ARGS="-gpus-acct\n-listen-address :9341"\n' >"$r/etc/default/prometheus-slurm-exporter"
mig
refused_mig "old ARGS with a line feed inside its quotes" "/etc/default/prometheus-slurm-exporter:1: ARGS=\" is not closed on its line"

fresh
mkdir -p "$r/etc/systemd/system/slurm_exporter.service.d"
printf '[Service]\nExecStart=/usr/local/bin/slurm_exporter --web.listen-address=:9341\n' >"$r/etc/systemd/system/slurm_exporter.service"
printf '[Service]\nExecStart=\nExecStart=/usr/local/bin/slurm_exporter --web.listen-address=:9400 --x%s\n' "$esc" \
	>"$r/etc/systemd/system/slurm_exporter.service.d/override.conf"
mig
refused_mig "an escape in the fork unit's drop-in" "/etc/systemd/system/slurm_exporter.service.d/override.conf:3: a control character"

fresh
printf 'ARGS="-gpus-acct%s-listen-address%s:9341"\r\n' "$tab" "$tab" >"$r/etc/default/prometheus-slurm-exporter"
mig
expect_mig "old ARGS split by tabs, in a CRLF file (one space between the words, no tab or CR written)" '"--web.listen-address=:9341 --gpus-acct"'

fresh
old_args "ARGS=\"-gpus-acct -x$(printf '\342\200\256')y --z\""
mig
name="a bidi control character (U+202E) in a word not carried"
expect_mig "$name" '"--gpus-acct"'
grep -qF -- '-x???y' "$D" && ! LC_ALL=C grep -q "[^$tab -~]" "$tmp/out" &&
	ok "$name: the comment and the message show it as ???, never raw" || { bad "$name: shown raw"; show "$tmp/out"; }

# ------------------------------------------------------------------ migrate-legacy-args: continued lines
fresh
printf 'ARGS="-gpus-acct \\\n  -listen-address :9341"\n' >"$r/etc/default/prometheus-slurm-exporter"
mig
expect_mig "old ARGS continued with a backslash (systemd joins the lines): the continued line's flags carried" '"--web.listen-address=:9341 --gpus-acct"'

fresh
printf 'OPTIONS=-listen-address \\\r\n:9400 \\\n-gpus-acct=false\n' >"$r/etc/default/prometheus-slurm-exporter"
mig
expect_mig "unquoted OPTIONS over three lines, one ending in CRLF, carried as systemd reads it" '"--web.listen-address=:9400"'

# ------------------------------------------------------------------ migrate-legacy-args: given twice
fresh
printf 'ARGS="-listen-address :9341 -gpus-acct"\nOPTIONS="-listen-address=:9341"\n' >"$r/etc/default/prometheus-slurm-exporter"
mig
name="a listen address in ARGS and in OPTIONS"
expect_mig "$name: carried once" '"--web.listen-address=:9341 --gpus-acct"'
said "$name" "given more than once in the old configuration, carried once: --web.listen-address=:9341"

fresh
old_args 'ARGS="-listen-address :9341"'
printf '[Service]\nExecStart=/usr/local/bin/slurm_exporter --web.listen-address=:9341 --web.listen-address=:9342\n' \
	>"$r/etc/systemd/system/slurm_exporter.service"
mig
expect_mig "the same listen address in the old file and the fork's unit, another one besides: each carried once" \
	'"--mapping.file=/etc/slurm-exporter-shim/sckyzo-slurm-exporter.json --web.listen-address=:9341 --web.listen-address=:9342"'

# ------------------------------------------------------------------ run-slurmrestd
printf '#!/bin/sh\necho ran\n' >"$tmp/slurmrestd"
chmod 755 "$tmp/slurmrestd"
wrap() {
	if [ "$(id -u)" = 0 ]; then
		setpriv --reuid=65534 --regid=65534 --clear-groups env -i PATH=/usr/bin:/bin SLURMRESTD="$tmp/slurmrestd" sh "$RUN" "$@"
	else
		env -i PATH=/usr/bin:/bin SLURMRESTD="$tmp/slurmrestd" sh "$RUN" "$@"
	fi >"$tmp/out" 2>&1
	rc=$?
}
for args in "-vu daemon" "-gdaemon" "-u0" "-Vg0" "-vvu root" "-hu root" "-a rest_auth/local -s slurmctld -vgroot" "unix:/x -vu root"; do
	# shellcheck disable=SC2086 # the words
	wrap $args
	if [ "$rc" = 78 ] && ! grep -q '^ran$' "$tmp/out" && grep -q "do not set slurmrestd's user or group" "$tmp/out"; then
		ok "run-slurmrestd $args: refused (exit 78)"
	else
		bad "run-slurmrestd $args: exit $rc (want 78, slurmrestd not run)"
		show "$tmp/out"
	fi
done
for args in "-a rest_auth/local -s slurmctld unix:/x" "-sslurmctld,openapi/slurmctld -t4 -vv" "-au" "--max-connections 8 -v"; do
	# shellcheck disable=SC2086
	wrap $args
	[ "$rc" = 0 ] && grep -q '^ran$' "$tmp/out" && ok "run-slurmrestd $args: run (no user or group option in it)" ||
		{ bad "run-slurmrestd $args: exit $rc"; show "$tmp/out"; }
done

if command -v shellcheck >/dev/null 2>&1 && [ "$PKG" = packaging ]; then
	shellcheck -x -s sh "$ENABLE" "$MIGRATE" "$RUN" "$PKG/replace-file.sh" >"$tmp/sc" 2>&1 &&
		ok "shellcheck: enable-slurmrestd, migrate-legacy-args, run-slurmrestd, replace-file.sh" || { bad "shellcheck"; show "$tmp/sc"; }
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
