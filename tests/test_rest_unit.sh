#!/bin/sh
# The optional slurmrestd unit (packaging/systemd/slurm-exporter-shim-slurmrestd.service): its
# ExecStart packaging/run-slurmrestd against a stub slurmrestd, the unit and its defaults file as
# systemd reads them, and packaging/enable-slurmrestd in a temporary root (ROOT=...) with a stub
# systemctl on PATH. One behaviour per case. Run from the repository root, or by make test.
# Needs python3 (the stub systemctl makes the unit's socket with it). The last line is
# "N passed, M failed".
set -u
cd "$(dirname "$0")/.." || exit 1
RUN=packaging/run-slurmrestd
ENABLE=packaging/enable-slurmrestd
UNIT=packaging/systemd/slurm-exporter-shim-slurmrestd.service
SHIM_UNIT=packaging/systemd/slurm-exporter-shim.service
DEFAULTS=packaging/default/slurm-exporter-shim-slurmrestd
SOCK=/run/slurm-exporter-shim-slurmrestd/slurmrestd.sock
URL_FLAG=--slurmrestd.url=unix:$SOCK
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   - $*"; }
bad() { failed=$((failed + 1)); echo "FAIL - $*"; }
show() { sed 's/^/       | /' "$1"; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_rest_unit.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp" # the unprivileged user of the run-slurmrestd cases reads the stubs

# --------------------------------------------------------------- run-slurmrestd
# A stub slurmrestd: prints each argument on a line, then SLURM_CONF, and exits with STUB_RC.
mkdir -p "$tmp/sbin"
cat >"$tmp/sbin/slurmrestd" <<'EOF'
#!/bin/sh
for a; do printf 'arg %s\n' "$a"; done
printf 'SLURM_CONF %s\n' "${SLURM_CONF:-}"
exit "${STUB_RC:-0}"
EOF
chmod 755 "$tmp/sbin/slurmrestd"
cp "$RUN" "$tmp/run-slurmrestd"
chmod 755 "$tmp/run-slurmrestd"

# as_user CMD...: run as an unprivileged user when root (slurmrestd and the wrapper refuse root)
as_user() {
	if [ "$(id -u)" = 0 ]; then
		setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
	else
		"$@"
	fi
}
# wrap [VAR=VALUE...] -- ARGS...: run-slurmrestd with that environment and ARGS, as_user; the exit
# status in $rc, stdout in $tmp/out, stderr in $tmp/err
wrap() {
	envs=""
	while [ "$1" != -- ]; do envs="$envs $1"; shift; done
	shift
	# shellcheck disable=SC2086 # the VAR=VALUE words
	as_user env -i PATH=/usr/bin:/bin $envs "$tmp/run-slurmrestd" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

wrap SLURMRESTD="$tmp/sbin/slurmrestd" -- -a rest_auth/local -s slurmctld "unix:$tmp/x.sock"
if [ "$rc" = 0 ] && [ "$(cat "$tmp/out")" = "$(printf 'arg -a\narg rest_auth/local\narg -s\narg slurmctld\narg unix:%s\nSLURM_CONF ' "$tmp/x.sock")" ]; then
	ok "run-slurmrestd execs SLURMRESTD with exactly its arguments, in order"
else
	bad "run-slurmrestd did not pass its arguments through (exit $rc)"
	show "$tmp/out"
	show "$tmp/err"
fi
grep -qxF "run-slurmrestd: exec $tmp/sbin/slurmrestd -a rest_auth/local -s slurmctld unix:$tmp/x.sock" "$tmp/err" &&
	ok "run-slurmrestd says what it runs (stderr, the journal)" || { bad "run-slurmrestd does not say what it runs"; show "$tmp/err"; }

wrap SLURMRESTD="$tmp/sbin/slurmrestd" STUB_RC=3 -- -a rest_auth/local
[ "$rc" = 3 ] && ok "slurmrestd's exit status is the unit's (exec, no shell left)" || bad "exit $rc, not slurmrestd's 3"

printf 'x\n' >"$tmp/slurm.conf"
chmod 644 "$tmp/slurm.conf"
wrap SLURMRESTD="$tmp/sbin/slurmrestd" SLURM_CONF="$tmp/slurm.conf" -- -a rest_auth/local
grep -qxF "SLURM_CONF $tmp/slurm.conf" "$tmp/out" && ok "SLURM_CONF from the defaults file reaches slurmrestd" ||
	{ bad "SLURM_CONF did not reach slurmrestd"; show "$tmp/out"; }

# refused: exit 78, a message naming what to change, slurmrestd never run
refused() {
	if [ "$rc" = 78 ] && [ ! -s "$tmp/out" ] && grep -q -- "$2" "$tmp/err"; then
		ok "$1: refused (exit 78), says '$2'"
	else
		bad "$1: exit $rc (want 78, nothing run, '$2' said)"
		show "$tmp/out"
		show "$tmp/err"
	fi
}
wrap SLURMRESTD="$tmp/sbin/nonexistent" -- -a rest_auth/local
refused "SLURMRESTD missing" "$tmp/sbin/nonexistent: no such executable file: install Slurm's slurmrestd"
wrap -- -a rest_auth/local
if [ -x /usr/sbin/slurmrestd ]; then
	ok "(skipped: /usr/sbin/slurmrestd exists here, the default cannot be shown missing)"
else
	refused "SLURMRESTD unset, /usr/sbin/slurmrestd missing" "/usr/sbin/slurmrestd: no such executable file"
fi
wrap SLURMRESTD=sbin/slurmrestd -- -a rest_auth/local
refused "SLURMRESTD relative" "SLURMRESTD=sbin/slurmrestd is not an absolute path"
wrap SLURMRESTD="$tmp/sbin" -- -a rest_auth/local
refused "SLURMRESTD a directory" "$tmp/sbin: no such executable file"
chmod 644 "$tmp/sbin/slurmrestd"
wrap SLURMRESTD="$tmp/sbin/slurmrestd" -- -a rest_auth/local
refused "SLURMRESTD not executable" "no such executable file"
chmod 755 "$tmp/sbin/slurmrestd"
wrap SLURMRESTD="$tmp/sbin/slurmrestd" SLURM_CONF="$tmp/nonexistent.conf" -- -a rest_auth/local
refused "SLURM_CONF not readable" "SLURM_CONF=$tmp/nonexistent.conf is not a file this user"
wrap SLURMRESTD="$tmp/sbin/slurmrestd" -- -a rest_auth/local -u slurmrestd unix:/x
refused "-u in the arguments" "argument -u: do not set slurmrestd's user or group"
wrap SLURMRESTD="$tmp/sbin/slurmrestd" -- -a rest_auth/local -gslurm unix:/x
refused "-g in the arguments" "argument -gslurm"
wrap SLURMRESTD="$tmp/sbin/slurmrestd" -- --generate-openapi-spec
[ "$rc" = 0 ] && ok "a long option starting with g (--generate-openapi-spec) is not taken for -g" || bad "--generate-openapi-spec refused"
if [ "$(id -u)" = 0 ]; then
	env -i PATH=/usr/bin:/bin SLURMRESTD="$tmp/sbin/slurmrestd" "$tmp/run-slurmrestd" -a rest_auth/local >"$tmp/out" 2>"$tmp/err"
	rc=$?
	refused "run as root" "runs as root, which slurmrestd refuses"
fi

# --------------------------------------------------------------- the unit and its defaults file
# key UNITFILE KEY: the value of KEY= in the unit (the last one)
key() { sed -n "s/^$2=//p" "$1" | tail -n 1; }
exec_start=$(key "$UNIT" ExecStart)
case $exec_start in
"/usr/share/slurm-exporter-shim/run-slurmrestd -a rest_auth/local \$SLURMRESTD_ARGS unix:$SOCK")
	ok "ExecStart: run-slurmrestd -a rest_auth/local \$SLURMRESTD_ARGS unix:$SOCK" ;;
*) bad "ExecStart is '$exec_start'" ;;
esac
[ "$(key "$UNIT" User)" = "$(key "$SHIM_UNIT" User)" ] && [ "$(key "$UNIT" Group)" = "$(key "$SHIM_UNIT" Group)" ] &&
	ok "slurmrestd runs as the shim's User= and Group= ($(key "$UNIT" User)): rest_auth/local accepts the shim" ||
	bad "User=/Group= differ from the shim's unit"
[ "/run/$(key "$UNIT" RuntimeDirectory)/slurmrestd.sock" = "$SOCK" ] && [ "$(key "$UNIT" RuntimeDirectoryMode)" = 0700 ] &&
	ok "the socket is in the unit's RuntimeDirectory, mode 0700 (slurmrestd makes the socket 0777)" ||
	bad "RuntimeDirectory=$(key "$UNIT" RuntimeDirectory) mode $(key "$UNIT" RuntimeDirectoryMode) does not hold $SOCK at 0700"
[ "$(key "$UNIT" EnvironmentFile)" = "-/etc/default/slurm-exporter-shim-slurmrestd" ] &&
	ok "EnvironmentFile=-/etc/default/slurm-exporter-shim-slurmrestd" || bad "EnvironmentFile=$(key "$UNIT" EnvironmentFile)"
[ "$(key "$UNIT" RestartPreventExitStatus)" = 78 ] && grep -q '^	exit 78$' "$RUN" &&
	ok "run-slurmrestd's refusals (exit 78) are not restarted (RestartPreventExitStatus=78)" ||
	bad "RestartPreventExitStatus=$(key "$UNIT" RestartPreventExitStatus) is not run-slurmrestd's refusal status"
grep -q "^SOCK=$SOCK\$" "$ENABLE" && grep -qF "$SOCK" docs/operations.md &&
	ok "enable-slurmrestd and docs/operations.md name the unit's socket" ||
	bad "enable-slurmrestd or docs/operations.md do not name $SOCK"
# The WantedBy of an [Install] section, not enabled by the packages
grep -q '^\[Install\]' "$UNIT" && grep -q 'dh_installsystemd --name=slurm-exporter-shim-slurmrestd --no-enable' packaging/debian/rules &&
	ok "the .deb installs the unit without enabling it (debian/rules: --no-enable)" || bad "debian/rules enables the slurmrestd unit"

# The defaults file as systemd's EnvironmentFile reads it: assignments (NAME=VALUE or NAME="VALUE")
# and comments only; then ExecStart expanded as systemd does ($VAR: the value's words).
if grep -v -e '^#' -e '^$' "$DEFAULTS" | grep -qv '^[A-Z_][A-Z0-9_]*=\("[^"\\$]*"\|[^"\\$ ]*\)$'; then
	bad "$DEFAULTS has a line that is not a plain assignment or a comment"
else
	ok "$DEFAULTS: plain assignments and comments only"
fi
envval() { sed -n "s/^$1=//p" "$DEFAULTS" | tail -n 1 | sed 's/^"\(.*\)"$/\1/'; }
[ "$(envval SLURMRESTD)" = /usr/sbin/slurmrestd ] && ok "SLURMRESTD=/usr/sbin/slurmrestd by default" || bad "SLURMRESTD=$(envval SLURMRESTD)"
rest_args=$(envval SLURMRESTD_ARGS)
argv=""
for w in $exec_start; do
	case $w in
	/usr/share/slurm-exporter-shim/run-slurmrestd) ;;
	\$SLURMRESTD_ARGS) argv="$argv $rest_args" ;;
	*) argv="$argv $w" ;;
	esac
done
# shellcheck disable=SC2086 # systemd's split of $SLURMRESTD_ARGS
wrap SLURMRESTD="$tmp/sbin/slurmrestd" -- $argv
if [ "$rc" = 0 ] && [ "$(grep '^arg ' "$tmp/out" | cut -c5- | paste -sd ' ' -)" = "-a rest_auth/local -s slurmctld unix:$SOCK" ]; then
	ok "the unit with the shipped defaults runs: slurmrestd -a rest_auth/local -s slurmctld unix:$SOCK"
else
	bad "the unit with the shipped defaults runs slurmrestd with: $(grep '^arg ' "$tmp/out" | cut -c5- | paste -sd ' ' -) (exit $rc)"
fi

# --------------------------------------------------------------- enable-slurmrestd
mkdir -p "$tmp/bin"
# the stub systemctl (tests/stub-systemctl: it logs each call, makes the unit's socket; STUB_FAIL,
# STUB_NO_SOCKET)
cp tests/stub-systemctl "$tmp/bin/systemctl"
chmod 755 "$tmp/bin/systemctl"
r=$tmp/root
D=$r/etc/default/slurm-exporter-shim

# fresh [ARGS-LINE]: a root with the shim's defaults file as shipped (its ARGS="" line replaced by
# ARGS-LINE when given; "-" removes it), the slurmrestd defaults file pointing at the stub
fresh() {
	rm -rf "$r" "$tmp/systemctl.log"
	mkdir -p "$r/etc/default" "$r/usr/sbin"
	if [ $# -eq 0 ]; then
		cp packaging/default/slurm-exporter-shim "$D"
	elif [ "$1" = - ]; then
		grep -v '^ARGS=' packaging/default/slurm-exporter-shim >"$D"
	else
		awk -v l="$1" '/^ARGS=""$/ { print l; next } { print }' packaging/default/slurm-exporter-shim >"$D"
	fi
	chmod 644 "$D"
	cp "$DEFAULTS" "$r/etc/default/slurm-exporter-shim-slurmrestd"
	cp "$tmp/sbin/slurmrestd" "$r/usr/sbin/slurmrestd"
	: >"$tmp/systemctl.log"
	cp "$D" "$tmp/before"
}
en() {
	ROOT=$r STUB_LOG=$tmp/systemctl.log SOCKET_WAIT=1 PATH="$tmp/bin:$PATH" sh "$ENABLE" "$@" >"$tmp/out" 2>&1
	rc=$?
}
args() { sed -n 's/^ARGS=//p' "$D" | tail -n 1; }
calls() { paste -sd ';' "$tmp/systemctl.log"; }
expect_args() {
	got=$(args)
	if [ "$got" = "$2" ]; then ok "$1: ARGS=$2"; else bad "$1: ARGS=$got, want $2"; show "$tmp/out"; fi
}
expect_calls() {
	if [ "$(calls)" = "$2" ]; then ok "$1: systemctl ${2:-never called}"; else bad "$1: systemctl calls '$(calls)', want '$2'"; show "$tmp/out"; fi
}
said() {
	if grep -qF -- "$2" "$tmp/out"; then ok "$1: says '$2'"; else bad "$1: does not say '$2'"; show "$tmp/out"; fi
}
unchanged() {
	if [ "$rc" = "$2" ] && cmp -s "$tmp/before" "$D"; then ok "$1: exit $rc, $D unchanged"; else
		bad "$1: exit $rc (want $2) or the defaults file changed"
		diff "$tmp/before" "$D" | show /dev/stdin
		show "$tmp/out"
	fi
}

fresh
en
[ "$rc" = 0 ] && ok "enable: exit 0" || { bad "enable: exit $rc"; show "$tmp/out"; }
expect_args "enable, ARGS as shipped" "\"$URL_FLAG\""
expect_calls "enable" "enable --now slurm-exporter-shim-slurmrestd.service;try-restart slurm-exporter-shim.service"
said "enable" "slurm-exporter-shim-slurmrestd.service is listening on $SOCK"
said "enable" "/etc/default/slurm-exporter-shim: ARGS=\"$URL_FLAG\""
if diff "$tmp/before" "$D" | grep '^[<>]' | grep -qv '^[<>] ARGS='; then
	bad "enable changed lines other than ARGS="
else
	ok "enable changed the ARGS= line only"
fi
"${SHIM_BIN:-./slurm-exporter-shim}" $(args | tr -d '"') --version >/dev/null 2>&1 &&
	ok "the shim accepts the ARGS enable wrote" || bad "the shim refuses ARGS=$(args)"

fresh
en
cp "$D" "$tmp/before"
: >"$tmp/systemctl.log"
en
unchanged "enable twice" 0
expect_calls "enable twice" "enable --now slurm-exporter-shim-slurmrestd.service"
said "enable twice" "nothing to change, the shim is not restarted"

fresh 'ARGS="--gpus-acct --log.level debug --slurmctld.url http://ctl1:6817,http://ctl2:6817"'
en
expect_args "other flags kept" "\"--gpus-acct --log.level debug --slurmctld.url http://ctl1:6817,http://ctl2:6817 $URL_FLAG\""

fresh "ARGS='--gpus-acct'"
en
expect_args "single quotes kept" "'--gpus-acct $URL_FLAG'"

fresh 'ARGS=--gpus-acct'
en
expect_args "unquoted ARGS" "\"--gpus-acct $URL_FLAG\""

fresh -
en
expect_args "no ARGS line: one added" "\"$URL_FLAG\""

fresh 'ARGS="--gpus-acct"'
chmod 640 "$D"
en
[ "$(stat -c %a "$D")" = 640 ] && ok "the defaults file's mode (0640) is kept" || bad "mode $(stat -c %a "$D"), not 640"

fresh 'ARGS="--gpus-acct"'
en --jobs
expect_args "--jobs" "\"--gpus-acct $URL_FLAG --slurmrestd.jobs\""

fresh 'ARGS="--slurmrestd.jobs=false"'
en --jobs
expect_args "--jobs with --slurmrestd.jobs=false there" "\"--slurmrestd.jobs=false $URL_FLAG\""
said "--jobs with --slurmrestd.jobs=false there" "ARGS already sets --slurmrestd.jobs: left as it is"

fresh 'ARGS="--gpus-acct --slurmrestd.url http://rest1:6820 --slurmrestd.auth.token-file /etc/t"'
en
unchanged "another --slurmrestd.url" 1
expect_calls "another --slurmrestd.url" ""
said "another --slurmrestd.url" "already points the shim at --slurmrestd.url http://rest1:6820: left as it is, nothing done"

fresh 'ARGS="-slurmrestd.url=unix:/run/slurmrestd/slurmrestd.socket"'
en
unchanged "another URL, one dash and =" 1
expect_calls "another URL, one dash and =" ""

fresh
rm "$r/usr/sbin/slurmrestd"
en
unchanged "slurmrestd missing" 1
expect_calls "slurmrestd missing" ""
said "slurmrestd missing" "/usr/sbin/slurmrestd: no such executable file: install Slurm's slurmrestd"

fresh
echo 'SLURMRESTD=/opt/slurm/sbin/slurmrestd' >>"$r/etc/default/slurm-exporter-shim-slurmrestd"
mkdir -p "$r/opt/slurm/sbin"
cp "$tmp/sbin/slurmrestd" "$r/opt/slurm/sbin/slurmrestd"
rm "$r/usr/sbin/slurmrestd"
en
[ "$rc" = 0 ] && ok "SLURMRESTD from the slurmrestd defaults file is the one checked" || { bad "SLURMRESTD=/opt/slurm/sbin/slurmrestd: exit $rc"; show "$tmp/out"; }
said "SLURMRESTD set" "slurmrestd: /opt/slurm/sbin/slurmrestd"

fresh
STUB_FAIL=enable en
unchanged "systemctl enable fails" 1
expect_calls "systemctl enable fails" "enable --now slurm-exporter-shim-slurmrestd.service"

fresh
STUB_NO_SOCKET=1 en
unchanged "no socket after SOCKET_WAIT" 1
said "no socket after SOCKET_WAIT" "no socket $SOCK after 1 s: slurmrestd did not come up"
expect_calls "no socket after SOCKET_WAIT" "enable --now slurm-exporter-shim-slurmrestd.service"

fresh 'ARGS="--gpus-acct --slurmctld.url \\"x\\""'
en
unchanged "ARGS with quotes inside" 1
expect_calls "ARGS with quotes inside" ""
said "ARGS with quotes inside" "add $URL_FLAG to it by hand"

fresh 'ARGS="--gpus-acct" --log.level debug'
en
unchanged "text after ARGS' closing quote" 1
said "text after ARGS' closing quote" "ARGS= is not one quoted value"

fresh 'ARGS="--gpus-acct"'
en --dry-run
unchanged "--dry-run" 0
expect_calls "--dry-run" ""
said "--dry-run" "would set ARGS=\"--gpus-acct $URL_FLAG\""

fresh
en --bogus
[ "$rc" = 2 ] && ok "an unknown option: exit 2" || bad "an unknown option: exit $rc"
en --disable --jobs
[ "$rc" = 2 ] && ok "--disable --jobs: exit 2" || bad "--disable --jobs: exit $rc"

fresh "ARGS=\"--gpus-acct $URL_FLAG --slurmrestd.jobs --log.level warn\""
en --disable
[ "$rc" = 0 ] && ok "--disable: exit 0" || { bad "--disable: exit $rc"; show "$tmp/out"; }
expect_args "--disable" '"--gpus-acct --log.level warn"'
expect_calls "--disable" "try-restart slurm-exporter-shim.service;disable --now slurm-exporter-shim-slurmrestd.service"

fresh "ARGS=\"--slurmrestd.url unix:$SOCK --gpus-acct\""
en --disable
expect_args "--disable, two-word spelling" '"--gpus-acct"'

fresh 'ARGS="--slurmrestd.url http://rest1:6820 --slurmrestd.jobs"'
en --disable
unchanged "--disable with another URL" 0
said "--disable with another URL" "names --slurmrestd.url http://rest1:6820, not this unit's socket: left as it is"
expect_calls "--disable with another URL" "disable --now slurm-exporter-shim-slurmrestd.service"

if command -v shellcheck >/dev/null 2>&1; then
	shellcheck -x -s sh "$RUN" "$ENABLE" >"$tmp/sc" 2>&1 && ok "shellcheck: run-slurmrestd, enable-slurmrestd (and replace-file.sh it sources)" ||
		{ bad "shellcheck"; show "$tmp/sc"; }
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
