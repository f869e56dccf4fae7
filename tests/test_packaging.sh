#!/bin/sh
# Acceptance test of the Debian package. Run from the repository
# root (make test does):
#
#   sh tests/test_packaging.sh
#
#   1. build: packaging/build-deb.sh builds the .deb from a clean copy of the
#      tree, with OUTDIR in a temporary directory, so nothing is written into
#      the repository; build products (build*/, the top-level binary) must not
#      be copied into the package build.
#   2. lintian on the result: no error (warnings and infos are printed).
#   3. dpkg -i on this machine, then the installed paths: --version prints
#      VERSION, --check-mapping accepts the installed mapping, the man page is
#      installed and renders, the unit, the conffiles and the system user are
#      there and the unit is enabled; the optional slurmrestd unit, its defaults file (a conffile),
#      run-slurmrestd and enable-slurmrestd are there and that unit is NOT enabled. Then dpkg --purge: every file of the
#      package, the conffiles, the directories and the enable symlink are gone.
#      The system user is KEPT on purge: packaging/debian has no postrm that
#      removes it (Debian practice, see packaging/debian/README.source: files
#      may still belong to it). The test checks that, and then deletes the
#      user itself if it did not exist before the test, so the machine is left
#      as it was found. (If packaging/debian/postrm ever calls deluser, the
#      test expects the user to be gone instead.)
#      The install part is skipped, with a message, when not running as root,
#      or when slurm-exporter-shim (in any dpkg state, e.g. config-files) or
#      prometheus-slurm-exporter is installed, or when any file the package
#      would install already exists (make install): a developer's machine is
#      never touched.
#   4. systemd-analyze verify accepts both units (the installed ones, between
#      install and purge, so ExecStart and the man page exist; when the
#      install part is skipped, a copy from the extracted .deb with ExecStart
#      pointing at the extracted program) and systemd-analyze security
#      --offline=true rates each at most MAX_EXPOSURE (2.0).
#
#   5. over a peer's installation (after the purge; the same skips, and skipped when a file it plants
#      already exists): SckyzO's slurm_exporter and rivosinc's exporter (its .deb, with and without
#      flags) as each leaves a host, then dpkg -i: the peer's schema picked, its flags carried and what
#      was not printed, its unit disabled, its files kept, and the installed shim serving the peer's
#      names on the peer's port (see the section's comment).
# Needs: dpkg-dev, debhelper, lintian, systemd (systemd-analyze), man-db and
# the build dependencies (scripts/install-deps.sh all installs them); flock
# (util-linux) serialises concurrent runs of the install part.
# Systemd need not be running. Part 5 needs build/tests/fake_slurmctld (FAKE_SLURMCTLD), curl, python3
# and runuser. Takes a few minutes.
# The last line is "N passed, M failed"; the exit status is non-zero on failure.
set -u

cd "$(dirname "$0")/.." || exit 1
root=$(pwd)

PKG=slurm-exporter-shim
MAX_EXPOSURE=${MAX_EXPOSURE:-2.0}
BIN=/usr/bin/$PKG
MAPPING=/etc/$PKG/prometheus-slurm-exporter.json
LOAD_MAPPING=/etc/$PKG/slurm-node-load.json
RIVOSINC_MAPPING=/etc/$PKG/rivosinc-slurm-exporter.json
SCKYZO_MAPPING=/etc/$PKG/sckyzo-slurm-exporter.json
DEFAULTS=/etc/default/$PKG
UNIT=/lib/systemd/system/$PKG.service
MANGZ=/usr/share/man/man1/$PKG.1.gz
DOCDIR=/usr/share/doc/$PKG
WANTS=/etc/systemd/system/multi-user.target.wants/$PKG.service
DSH_STATE=/var/lib/systemd/deb-systemd-helper-enabled/$PKG.service.dsh-also
REPO_UNIT=packaging/systemd/$PKG.service
REST=$PKG-slurmrestd
REST_UNIT=/lib/systemd/system/$REST.service
REST_DEFAULTS=/etc/default/$REST
REST_WANTS=/etc/systemd/system/multi-user.target.wants/$REST.service
REST_DSH_STATE=/var/lib/systemd/deb-systemd-helper-enabled/$REST.service.dsh-also
REPO_REST_UNIT=packaging/systemd/$REST.service
DATADIR=/usr/share/$PKG

passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   - $*"; }
bad() { failed=$((failed + 1)); echo "FAIL - $*"; }
skip() { echo "skip - $*"; }
note() { echo "       $*"; }
# show FILE [PREFIX]: print a log file indented (at most 40 lines)
show() {
  [ -s "$1" ] || return 0
  sed -n '1,40s/^/       | /p' "$1"
  n=$(wc -l <"$1")
  [ "$n" -le 40 ] || echo "       | ... ($n lines)"
}
finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit $?
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_packaging.XXXXXX") || exit 1
installed_by_us=0
user_existed=1
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
  # An interrupted run must not leave the package or the user behind.
  if [ "$installed_by_us" = 1 ] &&
     dpkg-query -W -f='${Status}' "$PKG" 2>/dev/null | grep -q -v 'not-installed'; then
    echo "test_packaging: cleanup: dpkg --purge $PKG" >&2
    dpkg --purge "$PKG" </dev/null >/dev/null 2>&1 || true
  fi
  if [ "$installed_by_us" = 1 ] && [ "$user_existed" = 0 ]; then
    remove_user >/dev/null 2>&1 || true
  fi
  unplant >/dev/null 2>&1
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

# remove_user: delete the system user and group the package created.
remove_user() {
  if getent passwd "$PKG" >/dev/null; then
    deluser --quiet --system "$PKG" 2>/dev/null || userdel "$PKG" || return 1
  fi
  if getent group "$PKG" >/dev/null; then
    delgroup --quiet --system "$PKG" 2>/dev/null || groupdel "$PKG" || return 1
  fi
  return 0
}

# dpkg_locked CMD...: run dpkg, retrying for up to 2 minutes while another
# dpkg/apt holds the lock (other jobs may install packages concurrently).
dpkg_locked() {
  tries=0
  while :; do
    dpkg "$@" </dev/null >"$tmp/dpkg.log" 2>&1 && return 0
    rc=$?
    if grep -qi 'lock' "$tmp/dpkg.log" && [ "$tries" -lt 24 ]; then
      tries=$((tries + 1))
      sleep 5
      continue
    fi
    return "$rc"
  done
}

# exposure UNITFILE: the "Overall exposure level" number, or nothing
exposure() {
  LC_ALL=C systemd-analyze security --offline=true --no-pager "$1" >"$tmp/security.log" 2>&1
  sed -n 's/.*Overall exposure level for [^:]*: *\([0-9][0-9.]*\).*/\1/p' "$tmp/security.log" | tail -n 1
}

# check_security UNITFILE LABEL
check_security() {
  level=$(exposure "$1")
  if [ -z "$level" ]; then
    bad "systemd-analyze security --offline=true $2: no 'Overall exposure level' in the output"
    show "$tmp/security.log"
  elif awk -v l="$level" -v m="$MAX_EXPOSURE" 'BEGIN { exit !(l + 0 <= m + 0) }'; then
    ok "systemd-analyze security --offline=true $2: exposure $level <= $MAX_EXPOSURE"
  else
    bad "systemd-analyze security --offline=true $2: exposure $level > $MAX_EXPOSURE"
    grep '✗' "$tmp/security.log" | sed 's/^/       | /'
  fi
}

# check_verify UNITFILE LABEL [ENV...]: "systemd-analyze verify" exits 0
# and prints nothing.
check_verify() {
  u=$1
  label=$2
  shift 2
  if env "$@" LC_ALL=C systemd-analyze verify "$u" >"$tmp/verify.log" 2>&1 &&
     [ ! -s "$tmp/verify.log" ]; then
    ok "systemd-analyze verify $label"
  else
    bad "systemd-analyze verify $label"
    show "$tmp/verify.log"
  fi
}

# ---------------------------------------------------------------- tools
missing=""
for t in dpkg-buildpackage dh dpkg-deb lintian systemd-analyze man git; do
  command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
done
if [ -n "$missing" ]; then
  bad "missing tools:$missing (install them with: scripts/install-deps.sh test)"
  finish
fi
version=$(cat VERSION)

# ---------------------------------------------------------------- 1. build
echo "== build the .deb (packaging/build-deb.sh, output in a temporary directory)"
marker=$tmp/marker
: >"$marker"
sleep 1 # the marker's mtime must be older than anything the build writes
start=$(date +%s)
if OUTDIR="$tmp/out" TMPDIR="$tmp" KEEP_TMP=1 sh packaging/build-deb.sh \
     >"$tmp/build.log" 2>&1; then
  build_rc=0
else
  build_rc=$?
fi
end=$(date +%s)
deb=$(ls "$tmp/out/${PKG}_${version}"-*.deb 2>/dev/null | head -n 1)
changes=$(ls "$tmp/out/${PKG}_${version}"-*.changes 2>/dev/null | head -n 1)
if [ "$build_rc" -eq 0 ] && [ -n "$deb" ] && [ -n "$changes" ]; then
  ok "build-deb.sh built ${deb##*/} in $((end - start)) s"
else
  bad "build-deb.sh (exit $build_rc) did not build ${PKG}_${version}-*.deb and .changes"
  tail -n 40 "$tmp/build.log" | sed 's/^/       | /'
  [ -n "$deb" ] || finish
fi

# The C build really ran inside dpkg-buildpackage, with the project's -Werror
# and dpkg-buildflags' hardening flags, not with flags inherited from a
# calling make (make asan exports CFLAGS=-fsanitize=...).
cc_lines=$(grep -E -- ' -c -o [^ ]+\.o ' "$tmp/build.log")
if [ -z "$cc_lines" ]; then
  bad "no compiler command in the dpkg-buildpackage log"
elif echo "$cc_lines" | grep -v -- '-Werror' | grep -q .; then
  bad "a compiler command without -Werror in the dpkg-buildpackage log"
elif echo "$cc_lines" | grep -v -- '-fstack-protector-strong' | grep -q . ||
     grep -q -- '-fsanitize' "$tmp/build.log"; then
  bad "the package was not built with dpkg-buildflags' flags (hardening missing or -fsanitize)"
  echo "$cc_lines" | head -n 1 | sed 's/^/       | /'
else
  ok "the C build ran inside dpkg-buildpackage with -Werror and the hardening flags ($(echo "$cc_lines" | wc -l) files)"
fi

# The package version is VERSION-N.
debver=$(dpkg-deb -f "$deb" Version)
case "$debver" in
  "$version"-*) ok "package version $debver matches VERSION $version" ;;
  *) bad "package version $debver does not match VERSION $version" ;;
esac

# The Maintainer is one identity everywhere: the .deb's field, the changelog's trailer (what
# dpkg-parsechangelog reads) and the RPM spec's %changelog name the same person and address, and it
# is no placeholder (example.org, the address this package was once built with).
maint=$(dpkg-deb -f "$deb" Maintainer)
chlog=$(dpkg-parsechangelog -l packaging/debian/changelog -S Maintainer 2>/dev/null)
spec=$(sed -n '/^%changelog/,$s/^\* [A-Z][a-z][a-z] [A-Z][a-z][a-z] [0-9]* [0-9]* \(.*>\) - .*/\1/p' packaging/rpm/slurm-exporter-shim.spec | head -n 1)
if [ -n "$maint" ] && [ "$maint" = "$chlog" ] && [ "$maint" = "$spec" ] &&
   ! printf '%s' "$maint" | grep -qi 'example\.org'; then
  ok "Maintainer $maint: the same in the .deb, debian/changelog and the RPM spec"
else
  bad "Maintainer: .deb '$maint', debian/changelog '$chlog', RPM spec '$spec' (one identity, no placeholder)"
fi

# Every program the unit runs (ExecStart, ExecReload...) comes with the package, with a package it
# Depends on, or with an Essential one: /bin/kill (ExecReload) is procps', which minbase lacks.
depends=$(dpkg-deb -f "$deb" Depends)
dpkg-deb -c "$deb" | awk '{ print $NF }' | sed 's|^\.||' >"$tmp/deb-files"
for prog in $(sed -n 's/^Exec[A-Za-z]*=[-@:+!]*\([^ ]*\).*/\1/p' "$REPO_UNIT" "$REPO_REST_UNIT" | sort -u); do
  if grep -qxF "$prog" "$tmp/deb-files"; then
    ok "the unit's $prog is in the package"
    continue
  fi
  owner=$(dpkg -S "$prog" 2>/dev/null | head -n 1 | cut -d: -f1)
  [ -n "$owner" ] || owner=$(dpkg -S "$(readlink -f "$prog")" 2>/dev/null | head -n 1 | cut -d: -f1)
  if [ -z "$owner" ]; then
    bad "the unit runs $prog, which no installed package ships"
  elif [ "$(dpkg-query -W -f='${Essential}' "$owner" 2>/dev/null)" = yes ] ||
       echo ", $depends," | grep -Eq "[, ]$owner[ ,(]"; then
    ok "the unit's $prog ($owner) is a dependency or Essential"
  else
    bad "the unit runs $prog from $owner, which is neither in Depends ($depends) nor Essential"
  fi
done

# The copied source tree (kept in $tmp by KEEP_TMP=1) holds no build products
# of the working tree: no build-*/ directory (dpkg-buildpackage's clean step
# removes only build/, build-asan/ and build-fuzz/) and no object file
# outside the package build's own build/.
srcdir=$(ls -d "$tmp"/slurm-exporter-shim-deb.*/"$PKG-$version" 2>/dev/null | head -n 1)
if [ -z "$srcdir" ]; then
  bad "the package build's source copy was not kept (KEEP_TMP=1)"
else
  stray=$(cd "$srcdir" && { ls -d build?* 2>/dev/null; find . -path ./build -prune -o \( -name '*.o' -o -name '*.a' \) -print; } | head -n 5)
  if [ -z "$stray" ]; then
    ok "the package build's source copy has no build products of the working tree"
  else
    bad "build products were copied into the package build: $(echo "$stray" | tr '\n' ' ')"
  fi
fi

# Nothing was written into the repository: no package files, no ./debian.
written=$(find "$root" -path "$root/.git" -prune -o -newer "$marker" \
  \( -name '*.deb' -o -name '*.ddeb' -o -name '*.changes' -o -name '*.buildinfo' \
     -o -path "$root/debian" \) -print 2>/dev/null | head -n 5)
if [ -z "$written" ] && [ ! -e "$root/debian" ]; then
  ok "the build wrote nothing into the repository"
else
  bad "the build wrote into the repository: $(echo "$written" | tr '\n' ' ')"
fi

# The packaged unit is the repository's unit.
mkdir -p "$tmp/root"
if dpkg-deb -x "$deb" "$tmp/root" && cmp -s "$tmp/root$UNIT" "$REPO_UNIT"; then
  ok "the .deb ships $REPO_UNIT as $UNIT"
else
  bad "the .deb does not ship $REPO_UNIT as $UNIT"
fi
# The unit stops the old exporter's and the SckyzO fork's units, which listen on :9341 too; the
# package replaces the old exporter's.
conflicts=$(sed -n 's/^Conflicts=//p' "$tmp/root$UNIT" | tr ' ' '\n')
for u in prometheus-slurm-exporter.service slurm_exporter.service; do
  if printf '%s\n' "$conflicts" | grep -qxF "$u"; then
    ok "the unit's Conflicts= names $u"
  else
    bad "the unit's Conflicts= does not name $u (both listen on :9341)"
  fi
done
for field in Conflicts Replaces Provides; do
  if dpkg-deb -f "$deb" "$field" | tr ',' '\n' | grep -qx ' *prometheus-slurm-exporter *'; then
    ok "the package $field: prometheus-slurm-exporter"
  else
    bad "the package's $field does not name prometheus-slurm-exporter: $(dpkg-deb -f "$deb" "$field")"
  fi
done
if cmp -s "$tmp/root$DATADIR/replace-file.sh" packaging/replace-file.sh &&
   [ "$(stat -c %a "$tmp/root$DATADIR/replace-file.sh")" = 644 ]; then
  ok "the .deb ships packaging/replace-file.sh as $DATADIR/replace-file.sh (0644, sourced by migrate-legacy-args and enable-slurmrestd)"
else
  bad "the .deb does not ship packaging/replace-file.sh as $DATADIR/replace-file.sh, mode 0644"
fi
if cmp -s "$tmp/root$REST_UNIT" "$REPO_REST_UNIT" && [ -x "$tmp/root$DATADIR/run-slurmrestd" ] &&
   [ -x "$tmp/root$DATADIR/enable-slurmrestd" ] && [ -f "$tmp/root$REST_DEFAULTS" ]; then
  ok "the .deb ships $REPO_REST_UNIT as $REST_UNIT, $REST_DEFAULTS, $DATADIR/run-slurmrestd and enable-slurmrestd"
else
  bad "the .deb lacks the slurmrestd unit ($REST_UNIT), $REST_DEFAULTS or $DATADIR/run-slurmrestd, enable-slurmrestd"
fi

# ---------------------------------------------------------------- 2. lintian
echo "== lintian"
if [ -n "$changes" ]; then target=$changes; else target=$deb; fi
lintian --fail-on error "$target" >"$tmp/lintian.log" 2>"$tmp/lintian.err"
lrc=$?
# "running with root privileges is not recommended!" is not about the package
grep -v 'running with root privileges' "$tmp/lintian.err" >>"$tmp/lintian.log"
nerr=$(grep -c '^E: ' "$tmp/lintian.log")
nwarn=$(grep -c '^W: ' "$tmp/lintian.log")
grep -E '^[EW]: ' "$tmp/lintian.log" | sed 's/^/       | /'
if [ "$lrc" -eq 0 ] && [ "$nerr" -eq 0 ]; then
  ok "lintian ${target##*/}: 0 errors, $nwarn warnings"
else
  bad "lintian ${target##*/}: exit $lrc, $nerr errors, $nwarn warnings"
  grep -vE '^[EW]: ' "$tmp/lintian.log" | sed 's/^/       | /'
fi

# ---------------------------------------------------------------- 3. install
echo "== dpkg -i, installed paths, dpkg --purge"
# Two runs at once (make test in two checkouts) must not install and purge
# under each other: the install part holds a machine-wide lock.
lockdir=/run/lock
[ -d "$lockdir" ] && [ -w "$lockdir" ] || lockdir=/tmp
if command -v flock >/dev/null 2>&1; then
  exec 9>"$lockdir/$PKG.test_packaging.lock"
  if ! flock -w 900 9; then
    bad "could not take $lockdir/$PKG.test_packaging.lock within 15 minutes"
    finish
  fi
fi
why=""
status=$(dpkg-query -W -f='${Status}' "$PKG" 2>/dev/null)
if [ "$(id -u)" -ne 0 ]; then
  why="not running as root"
elif [ -n "$status" ] && [ "$status" != "unknown ok not-installed" ]; then
  why="package $PKG is already on this machine (dpkg status: $status); not touching it"
elif dpkg-query -W -f='${Status}' prometheus-slurm-exporter 2>/dev/null | grep -q 'installed'; then
  why="prometheus-slurm-exporter is installed; $PKG conflicts with it and would replace it"
else
  for f in $BIN $MAPPING $DEFAULTS $UNIT /usr/lib/systemd/system/$PKG.service $MANGZ $DOCDIR /etc/$PKG \
           $REST_UNIT /usr/lib/systemd/system/$REST.service $REST_DEFAULTS $DATADIR; do
    if [ -e "$f" ] || [ -L "$f" ]; then
      why="$f exists (make install?); not overwriting it"
      break
    fi
  done
fi

if [ -n "$why" ]; then
  skip "install/purge part: $why"
  # Still check the unit: a copy of the packaged one whose ExecStart is the
  # extracted binary, the man page found through MANPATH.
  echo "== systemd-analyze (on the unit extracted from the .deb)"
  sed "s|^ExecStart=$BIN|ExecStart=$tmp/root$BIN|" "$tmp/root$UNIT" >"$tmp/$PKG.service"
  check_verify "$tmp/$PKG.service" "(extracted unit, ExecStart=extracted binary)" \
    MANPATH="$tmp/root/usr/share/man"
  check_security "$tmp/root$UNIT" "(packaged unit)"
  sed "s|^ExecStart=$DATADIR/|ExecStart=$tmp/root$DATADIR/|" "$tmp/root$REST_UNIT" >"$tmp/$REST.service"
  check_verify "$tmp/$REST.service" "(extracted slurmrestd unit, ExecStart=extracted run-slurmrestd)" \
    MANPATH="$tmp/root/usr/share/man"
  check_security "$tmp/root$REST_UNIT" "(packaged slurmrestd unit)"
  finish
fi

if getent passwd "$PKG" >/dev/null || getent group "$PKG" >/dev/null; then
  user_existed=1
else
  user_existed=0
fi
installed_by_us=1
# The old exporter's defaults file, as a site that ran it with -gpus-acct has it: the postinst
# carries the flag over (packaging/migrate-legacy-args) and says so. Only when the machine has none.
OLD_DEFAULTS=/etc/default/prometheus-slurm-exporter
planted_old=0
if [ ! -e "$OLD_DEFAULTS" ] && [ ! -L "$OLD_DEFAULTS" ]; then
  echo 'ARGS="-gpus-acct"' >"$OLD_DEFAULTS" && planted_old=1
fi
if dpkg_locked -i "$deb"; then
  ok "dpkg -i ${deb##*/}"
else
  bad "dpkg -i ${deb##*/}"
  show "$tmp/dpkg.log"
fi
if [ "$planted_old" = 1 ]; then
  rm -f "$OLD_DEFAULTS"
  if grep -qx 'ARGS="--gpus-acct"' "$DEFAULTS" &&
     grep -q 'carried over into /etc/default/slurm-exporter-shim: ARGS="--gpus-acct"' "$tmp/dpkg.log"; then
    ok "postinst carried $OLD_DEFAULTS's -gpus-acct into $DEFAULTS and said so"
  else
    bad "postinst did not carry $OLD_DEFAULTS's ARGS=\"-gpus-acct\" into $DEFAULTS (or did not say so)"
    grep -n '^ARGS=' "$DEFAULTS" | sed 's/^/       | /'
    show "$tmp/dpkg.log"
  fi
fi
status=$(dpkg-query -W -f='${Status}' "$PKG" 2>/dev/null)
if [ "$status" = "install ok installed" ]; then
  ok "dpkg status: $status"
else
  bad "dpkg status after dpkg -i: '$status'"
  finish
fi
dpkg -L "$PKG" >"$tmp/files" 2>/dev/null

out=$("$BIN" --version 2>&1)
rc=$?
if [ "$rc" -eq 0 ] && printf '%s\n' "$out" | head -n 1 | grep -qwF -- "$version"; then
  ok "$BIN --version: $out"
else
  bad "$BIN --version (exit $rc) does not print VERSION $version: $out"
fi

if "$BIN" --check-mapping "$MAPPING" --check-mapping "$LOAD_MAPPING" --check-mapping "$RIVOSINC_MAPPING" \
	--check-mapping "$SCKYZO_MAPPING" >"$tmp/check.log" 2>&1; then
  ok "$BIN --check-mapping $MAPPING $LOAD_MAPPING $RIVOSINC_MAPPING $SCKYZO_MAPPING: $(tr '\n' ' ' <"$tmp/check.log")"
else
  bad "$BIN --check-mapping $MAPPING $LOAD_MAPPING $RIVOSINC_MAPPING $SCKYZO_MAPPING"
  show "$tmp/check.log"
fi

# man page: installed, found by man(1), renders without a warning
if [ -f "$MANGZ" ] && gzip -t "$MANGZ" 2>/dev/null; then
  ok "man page installed: $MANGZ"
else
  bad "man page $MANGZ missing or not gzip"
fi
where=$(man -w "$PKG" 2>/dev/null)
if [ "$where" = "$MANGZ" ]; then
  ok "man -w $PKG: $where"
else
  bad "man -w $PKG: '$where', expected $MANGZ"
fi
unset MAN_KEEP_FORMATTING
if LC_ALL=C MANWIDTH=80 MANPAGER=cat PAGER=cat man -l "$MANGZ" >"$tmp/man.txt" 2>"$tmp/man.err" &&
   [ ! -s "$tmp/man.err" ] && grep -q '^NAME' "$tmp/man.txt" &&
   grep -q "$PKG" "$tmp/man.txt"; then
  ok "man -l $MANGZ renders ($(wc -l <"$tmp/man.txt") lines, no warning)"
else
  bad "man -l $MANGZ does not render cleanly"
  show "$tmp/man.err"
fi

# unit, defaults, conffiles, enable symlink, docs
if [ -f "$UNIT" ] && grep -qx "$UNIT" "$tmp/files"; then
  ok "unit installed: $UNIT"
else
  bad "unit $UNIT not installed"
fi
if [ -L "$WANTS" ]; then
  ok "unit enabled by the package: $WANTS -> $(readlink "$WANTS")"
else
  bad "unit not enabled: no $WANTS"
fi
# the optional slurmrestd unit: installed, not enabled (debian/rules: --no-enable)
if [ -f "$REST_UNIT" ] && grep -qx "$REST_UNIT" "$tmp/files" && [ -x "$DATADIR/run-slurmrestd" ] &&
   [ -x "$DATADIR/enable-slurmrestd" ]; then
  ok "slurmrestd unit installed: $REST_UNIT, $DATADIR/run-slurmrestd, $DATADIR/enable-slurmrestd"
else
  bad "slurmrestd unit $REST_UNIT, run-slurmrestd or enable-slurmrestd not installed"
fi
if "$DATADIR/enable-slurmrestd" --help >"$tmp/help.log" 2>&1 && grep -q 'enable-slurmrestd' "$tmp/help.log"; then
  ok "the installed enable-slurmrestd finds the replace-file.sh it sources (--help)"
else
  bad "the installed enable-slurmrestd --help fails"
  show "$tmp/help.log"
fi
if [ -e "$REST_WANTS" ] || [ -L "$REST_WANTS" ]; then
  bad "the slurmrestd unit was enabled by the package: $REST_WANTS"
else
  ok "the slurmrestd unit is not enabled by the package (no $REST_WANTS)"
fi
conffiles=$(dpkg-query -W -f='${Conffiles}\n' "$PKG" | awk 'NF { print $1 }' | sort)
expected=$(printf '%s\n' "$DEFAULTS" "$MAPPING" "$LOAD_MAPPING" "$RIVOSINC_MAPPING" "$SCKYZO_MAPPING" "$REST_DEFAULTS" | sort)
if [ "$conffiles" = "$expected" ] && [ -f "$DEFAULTS" ] && [ -f "$MAPPING" ] && [ -f "$REST_DEFAULTS" ]; then
  ok "conffiles: $(echo $conffiles)"
else
  bad "conffiles are '$(echo "$conffiles" | tr '\n' ' ')', expected '$(echo "$expected" | tr '\n' ' ')'"
fi
if [ -f "$DOCDIR/copyright" ] && ls "$DOCDIR"/*.md >/dev/null 2>&1; then
  ok "docs installed in $DOCDIR"
else
  bad "docs missing in $DOCDIR"
fi

# system user
pw=$(getent passwd "$PKG")
if [ -n "$pw" ]; then
  uid=$(echo "$pw" | cut -d: -f3)
  home=$(echo "$pw" | cut -d: -f6)
  shell=$(echo "$pw" | cut -d: -f7)
  if [ "$uid" -lt 1000 ] && getent group "$PKG" >/dev/null && [ ! -e "$home" ]; then
    ok "system user $PKG: uid $uid, group $PKG, home $home (absent), shell $shell"
  else
    bad "user $PKG is not a system user with its group and no home: $pw"
  fi
else
  bad "system user $PKG does not exist"
fi

# ---------------------------------------------------------------- 4. systemd
echo "== systemd-analyze (on the installed unit)"
check_verify "$UNIT" "$UNIT"
check_security "$UNIT" "$UNIT"
check_verify "$REST_UNIT" "$REST_UNIT"
check_security "$REST_UNIT" "$REST_UNIT"

# ---------------------------------------------------------------- purge
echo "== dpkg --purge"
if dpkg_locked --purge "$PKG"; then
  ok "dpkg --purge $PKG"
else
  bad "dpkg --purge $PKG"
  show "$tmp/dpkg.log"
fi
status=$(dpkg-query -W -f='${Status}' "$PKG" 2>/dev/null)
if [ -z "$status" ] || [ "$status" = "unknown ok not-installed" ]; then
  ok "dpkg no longer knows $PKG"
else
  bad "dpkg status after purge: '$status'"
fi

# Every file and every directory of the package's own (not /usr, /etc, ...)
left=""
while IFS= read -r f; do
  [ -n "$f" ] || continue
  if [ -d "$f" ]; then
    # a directory (or /lib, a symlink to usr/lib): only the package's own go
    case $f in
      */$PKG) [ -e "$f" ] && left="$left $f" ;;
    esac
  elif [ -e "$f" ] || [ -L "$f" ]; then
    left="$left $f"
  fi
done <"$tmp/files"
if [ -z "$left" ]; then
  ok "purge removed every file of the package and its own directories (dpkg -L listed $(wc -l <"$tmp/files") paths)"
else
  bad "left after purge:$left"
fi
left=""
for f in $MAPPING $DEFAULTS /etc/$PKG $WANTS $DSH_STATE $REST_DEFAULTS $REST_WANTS $REST_DSH_STATE; do
  if [ -e "$f" ] || [ -L "$f" ]; then left="$left $f"; fi
done
for f in $MAPPING $DEFAULTS $REST_DEFAULTS; do
  for g in "$f".dpkg-*; do
    if [ -e "$g" ]; then left="$left $g"; fi
  done
done
if [ -z "$left" ]; then
  ok "purge removed the conffiles (both defaults files), /etc/$PKG and the enable symlink"
else
  bad "left after purge:$left"
fi

# The user: packaging/debian keeps it on purge (no postrm removes it).
if [ -f packaging/debian/postrm ] && grep -q 'deluser\|userdel' packaging/debian/postrm; then
  if getent passwd "$PKG" >/dev/null; then
    bad "packaging/debian/postrm removes the user, but $PKG still exists after purge"
  else
    ok "purge removed the system user $PKG (packaging/debian/postrm)"
  fi
else
  if getent passwd "$PKG" >/dev/null; then
    ok "system user $PKG is kept on purge, as packaging/debian intends (Debian practice)"
  else
    bad "system user $PKG was removed on purge, but packaging/debian does not remove it"
  fi
fi
if [ "$user_existed" = 0 ]; then
  if remove_user; then
    note "(the test removed the user $PKG it had caused to be created)"
  else
    bad "could not remove the user $PKG the test created"
  fi
fi
installed_by_us=0

# ---------------------------------------------------------------- 5. over a peer's installation
# SckyzO's slurm_exporter v1.8.4 and rivosinc's prometheus-slurm-exporter v1.7.0, as each leaves a
# host: the files their own repositories install, then dpkg -i of the shim's package over them.
#   SckyzO: no package; its README copies the binary to /usr/local/bin/slurm_exporter and
#     systemd/slurm_exporter.service to /etc/systemd/system (User=prometheus, flags in ExecStart,
#     :9341), then enables it.
#   rivosinc: its .deb (nfpm: package prometheus-slurm-exporter, Maintainer abhinavDhulipala, Vendor
#     rivosinc, /usr/bin/prometheus-slurm-exporter, no unit, no defaults file, no user); its README
#     writes /etc/systemd/system/prometheus-slurm-exporter.service (root, no flags, :9092) and a
#     "systemctl edit" drop-in with Environment= (CLI_TIMEOUT, LOGLEVEL...).
# Checked: the peer's schema picked, its flags carried and what was not carried printed, its unit
# disabled with its files kept (owner, mode, content), rivosinc's package removed by dpkg
# (Conflicts+Replaces), the rewritten defaults file with the shipped owner and mode, and the installed
# shim, run as its user with the carried ARGS (plus the fake slurmctld and slurmrestd serving
# tests/fixtures/peers-25.11/P1-busy-mix), serving the peer's names on the peer's port (127.0.0.1:
# 9341 or 9092; another port, said, when that one is taken), every exact row equal to the peer's
# recorded output series for series (tests/peer_compare.py).
FAKE_SLURMCTLD=${FAKE_SLURMCTLD:-build/tests/fake_slurmctld}
PEER_STATE=tests/fixtures/peers-25.11/P1-busy-mix
SYSD=/etc/systemd/system
PLANTED="/usr/local/bin/slurm_exporter $SYSD/slurm_exporter.service $SYSD/slurm_exporter.service.d
  $SYSD/multi-user.target.wants/slurm_exporter.service $SYSD/prometheus-slurm-exporter.service
  $SYSD/prometheus-slurm-exporter.service.d $SYSD/multi-user.target.wants/prometheus-slurm-exporter.service"
planted=0
fake_pid=""
shim_pid=""

# unplant: remove what a peer case planted (and rivosinc's package, if still there)
unplant() {
  [ -n "$shim_pid" ] && kill "$shim_pid" 2>/dev/null && wait "$shim_pid" 2>/dev/null
  [ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null && wait "$fake_pid" 2>/dev/null
  shim_pid="" fake_pid=""
  [ "$planted" = 1 ] || return 0
  if dpkg-query -W -f='${Status}' prometheus-slurm-exporter 2>/dev/null | grep -q -v 'not-installed'; then
    dpkg --purge prometheus-slurm-exporter </dev/null >/dev/null 2>&1
  fi
  for f in $PLANTED; do rm -rf "$f"; done
  planted=0
}

# stat_of FILE: "owner:group mode" of FILE
stat_of() { stat -c '%U:%G %a' "$1" 2>/dev/null; }

# rivosinc_deb: rivosinc's v1.7.0 .deb as its .goreleaser.yaml (nfpm) makes it: its binary a stub
rivosinc_deb() {
  d=$tmp/rivosinc-deb
  rm -rf "$d"
  mkdir -p "$d/DEBIAN" "$d/usr/bin"
  printf '#!/bin/sh\necho "rivosinc prometheus-slurm-exporter (test stub)"\n' >"$d/usr/bin/prometheus-slurm-exporter"
  chmod 755 "$d/usr/bin/prometheus-slurm-exporter"
  printf 'Package: prometheus-slurm-exporter\nVersion: 1.7.0\nSection: default\nPriority: optional\nArchitecture: %s\nMaintainer: abhinavDhulipala\nVendor: rivosinc\nInstalled-Size: 1\nDescription: no description given\n' \
    "$(dpkg --print-architecture)" >"$d/DEBIAN/control"
  dpkg-deb --root-owner-group -b "$d" "$tmp/rivosinc.deb" >/dev/null 2>&1
}

# plant_sckyzo: SckyzO's README installation, its unit's ExecStart with collector toggles, a timeout
# and a log level (SckyzO's docs/configuration.md flags)
plant_sckyzo() {
  printf '#!/bin/sh\necho "SckyzO slurm_exporter (test stub)"\n' >/usr/local/bin/slurm_exporter
  chmod 755 /usr/local/bin/slurm_exporter
  cat >"$SYSD/slurm_exporter.service" <<'UNIT'
[Unit]
Description=Prometheus Slurm Exporter
Documentation=https://github.com/sckyzo/slurm_exporter
Wants=network-online.target
After=network-online.target

[Service]
Type=simple
User=prometheus
Group=prometheus
ExecStart=/usr/local/bin/slurm_exporter \
  --web.listen-address=":9341" \
  --collector.gpus="true" \
  --no-collector.scheduler \
  --command.timeout=10s \
  --slurm.bin-path=/opt/slurm/bin \
  --log.level=debug
Restart=on-failure
RestartSec=5

[Install]
WantedBy=multi-user.target
UNIT
  chmod 644 "$SYSD/slurm_exporter.service"
  systemctl enable slurm_exporter.service >/dev/null 2>&1
}

# plant_rivosinc [bare]: rivosinc's .deb installed, its README's unit and (unless bare) its README's
# drop-in with an ExecStart of its flags
plant_rivosinc() {
  rivosinc_deb && dpkg_locked -i "$tmp/rivosinc.deb" || return 1
  cat >"$SYSD/prometheus-slurm-exporter.service" <<'UNIT'
[Unit]
Description=Prometheus SLURM Exporter

[Service]
ExecStart=/usr/bin/prometheus-slurm-exporter
Restart=always
RestartSec=15

[Install]
WantedBy=multi-user.target
UNIT
  chmod 644 "$SYSD/prometheus-slurm-exporter.service"
  if [ "${1:-}" != bare ]; then
    mkdir -p "$SYSD/prometheus-slurm-exporter.service.d"
    cat >"$SYSD/prometheus-slurm-exporter.service.d/override.conf" <<'UNIT'
[Service]
Environment="PATH=/opt/slurm/bin"
Environment="CLI_TIMEOUT=60"
Environment="LOGLEVEL=debug"
ExecStart=
ExecStart=/usr/bin/prometheus-slurm-exporter -slurm.collect-diags -slurm.collect-licenses -slurm.poll-limit=20 -trace.enabled
UNIT
    chmod 640 "$SYSD/prometheus-slurm-exporter.service.d/override.conf"
  fi
  systemctl enable prometheus-slurm-exporter.service >/dev/null 2>&1
}

# serve_check LABEL MAPPING PEER_OUTPUT PORT SAMPLE: the installed shim, as its user, with the ARGS
# of the defaults file (split on white space, as systemd does), the listen address's host made
# 127.0.0.1, against the fake: PORT is that address's port; SAMPLE a line the peer printed
serve_check() {
  label=$1 map=$2 peer_out=$3 want_port=$4 sample=$5
  args=$(sed -n 's/^ARGS="\(.*\)"$/\1/p' "$DEFAULTS" | tail -n 1)
  case " $args " in
    *" --web.listen-address=:$want_port "*) ;;
    *) bad "$label: the carried ARGS do not listen on :$want_port: $args"; return ;;
  esac
  rm -f "$tmp/fake.port"
  "$FAKE_SLURMCTLD" --port 0 --port-file "$tmp/fake.port" --dir "$PEER_STATE" 2>"$tmp/fake.log" &
  fake_pid=$!
  i=0
  while [ ! -s "$tmp/fake.port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
  fport=$(cat "$tmp/fake.port" 2>/dev/null)
  [ -n "$fport" ] || { bad "$label: fake_slurmctld does not start"; return; }
  port=$want_port
  set -f # ARGS' regexes are words, never globs
  for _try in 1 2 3 4 5; do
    : >"$tmp/shim.log"
    # shellcheck disable=SC2046 # ARGS is split on white space, as systemd splits it
    runuser -u "$PKG" -- "$BIN" $(printf '%s' "$args" | sed "s|--web.listen-address=:$want_port|--web.listen-address=127.0.0.1:$port|") \
      --slurmctld.url "http://127.0.0.1:$fport" --slurmrestd.url "http://127.0.0.1:$fport" --slurmrestd.jobs \
      --slurmctld.min-interval 600 --slurmctld.jobs.min-interval 600 --slurmrestd.min-interval 600 \
      >/dev/null 2>"$tmp/shim.log" &
    shim_pid=$!
    i=0
    while [ $i -lt 100 ] && ! grep -q 'listening on\|cannot listen' "$tmp/shim.log"; do sleep 0.1; i=$((i + 1)); done
    grep -q 'listening on' "$tmp/shim.log" && break
    kill "$shim_pid" 2>/dev/null; wait "$shim_pid" 2>/dev/null; shim_pid=""
    grep -q 'cannot listen' "$tmp/shim.log" || break
    port=$((20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 12000)) # below the ephemeral ports
    note "127.0.0.1:$want_port is taken on this machine: 127.0.0.1:$port instead"
  done
  set +f
  if [ -z "$shim_pid" ]; then
    bad "$label: the installed shim does not start as $PKG with the carried ARGS"
    show "$tmp/shim.log"
  else
    code=$(curl -s --max-time 60 -o "$tmp/served.txt" -w '%{http_code}' "http://127.0.0.1:$port/metrics")
    excl=$(printf '%s' "$args" | tr ' ' '\n' | sed -n 's/^--mapping.exclude=//p')
    python3 tests/peer_compare.py "$map" "$peer_out" "$tmp/served.txt" "$excl" >"$tmp/cmp.txt" 2>&1
    cmp_rc=$?
    if [ "$code" = 200 ] && grep -qxF "$sample" "$tmp/served.txt" && [ "$cmp_rc" = 0 ]; then
      ok "$label: the installed shim, as $PKG with the carried ARGS, serves the peer's names on 127.0.0.1:$port ($sample; $(tail -n 1 "$tmp/cmp.txt"))"
    else
      bad "$label: the installed shim on 127.0.0.1:$port does not serve the peer's series (HTTP $code, $(grep -c . "$tmp/served.txt") lines; $sample; $(tail -n 1 "$tmp/cmp.txt"))"
      grep '^differs\|^excluded' "$tmp/cmp.txt" | head -n 5 | sed 's/^/       | /'
      grep -v '^#' "$tmp/served.txt" | head -n 5 | sed 's/^/       | /'
      show "$tmp/shim.log"
    fi
  fi
  kill "$shim_pid" "$fake_pid" 2>/dev/null
  wait "$shim_pid" "$fake_pid" 2>/dev/null
  shim_pid="" fake_pid=""
}

# said LABEL TEXT: dpkg -i's output holds TEXT
said() {
  if grep -qF -- "$2" "$tmp/dpkg.log"; then ok "$1: says '$2'"; else bad "$1: does not say '$2'"; show "$tmp/dpkg.log"; fi
}

# peer_case NAME: plant NAME's installation, dpkg -i the shim over it, check, purge, unplant
peer_case() {
  name=$1
  echo "== dpkg -i over $name's installation"
  planted=1
  case $name in
    sckyzo) plant_sckyzo; unit=slurm_exporter.service ;;
    rivosinc*) plant_rivosinc "${name#rivosinc-}" || { bad "$name: rivosinc's .deb does not install"; show "$tmp/dpkg.log"; unplant; return; }
      unit=prometheus-slurm-exporter.service ;;
  esac
  if systemctl is-enabled --quiet "$unit" 2>/dev/null; then
    ok "$name: $unit planted and enabled"
  else
    bad "$name: $unit planted but systemctl does not report it enabled"
  fi
  before=""
  for f in /usr/local/bin/slurm_exporter "$SYSD/$unit" "$SYSD/$unit.d/override.conf"; do
    [ -f "$f" ] && before="$before $f=$(stat_of "$f"):$(md5sum <"$f" | cut -c1-32)"
  done
  installed_by_us=1
  if dpkg_locked -i "$deb"; then
    ok "$name: dpkg -i ${deb##*/} over it"
  else
    bad "$name: dpkg -i ${deb##*/} over it"
    show "$tmp/dpkg.log"
  fi
  case $name in
    sckyzo)
      said "$name" 'carried over into /etc/default/slurm-exporter-shim: ARGS="--mapping.file=/etc/slurm-exporter-shim/sckyzo-slurm-exporter.json --web.listen-address=:9341 --log.level=debug --slurmctld.timeout=10 --slurmrestd.timeout=10 --mapping.exclude=(slurm_scheduler_.*|slurm_(user_)?rpc_stats.*)"'
      said "$name" "the sckyzo exporter's collectors that were off, their families left out (--mapping.exclude): scheduler"
      said "$name" "not carried: --slurm.bin-path=/opt/slurm/bin (the shim runs no Slurm command: it reads slurmctld's metrics)"
      said "$name" "disabled slurm_exporter.service (SckyzO/slurm_exporter's, on :9341)"
      ;;
    rivosinc)
      said "$name" 'carried over into /etc/default/slurm-exporter-shim: ARGS="--mapping.file=/etc/slurm-exporter-shim/rivosinc-slurm-exporter.json --log.level=debug --web.listen-address=:9092 --slurmctld.timeout=60 --slurmrestd.timeout=60 --slurmrestd.min-interval=20 --mapping.exclude=(slurm_account_(collect_error|cpu_limit|job_alloc_limit|job_limit|mem_limit))"'
      said "$name" "the rivosinc exporter's collectors that were off, their families left out (--mapping.exclude): limits"
      said "$name" "not carried: -trace.enabled (the shim has no /trace endpoint)"
      said "$name" "disabled prometheus-slurm-exporter.service (rivosinc's, on :9092)"
      ;;
    rivosinc-bare)
      said "$name" "found the old exporter's flags in /var/lib/dpkg/status (rivosinc's prometheus-slurm-exporter package)"
      said "$name" 'carried over into /etc/default/slurm-exporter-shim: ARGS="--mapping.file=/etc/slurm-exporter-shim/rivosinc-slurm-exporter.json --web.listen-address=:9092 --mapping.exclude=(slurm_(backfill_.*|daemon_thread_count|dbd_agent_queue_size|rpc_.*))|(slurm_lic_.*)|(slurm_account_(collect_error|cpu_limit|job_alloc_limit|job_limit|mem_limit))"'
      said "$name" "the rivosinc exporter's collectors that were off, their families left out (--mapping.exclude): diags licenses limits"
      ;;
  esac
  case $name in
    rivosinc*)
      if dpkg-query -W -f='${Status}' prometheus-slurm-exporter 2>/dev/null | grep -q 'install ok installed'; then
        bad "$name: rivosinc's prometheus-slurm-exporter package is still installed"
      else
        ok "$name: dpkg removed rivosinc's prometheus-slurm-exporter package (Conflicts and Replaces)"
      fi ;;
  esac
  if systemctl is-enabled --quiet "$unit" 2>/dev/null; then
    bad "$name: $unit is still enabled beside the shim's unit (which Conflicts= with it)"
  else
    ok "$name: $unit disabled"
  fi
  after=""
  for f in /usr/local/bin/slurm_exporter "$SYSD/$unit" "$SYSD/$unit.d/override.conf"; do
    [ -f "$f" ] && after="$after $f=$(stat_of "$f"):$(md5sum <"$f" | cut -c1-32)"
  done
  if [ -n "$before" ] && [ "$before" = "$after" ]; then
    ok "$name: the peer's files kept, owner, mode and content:$before"
  else
    bad "$name: the peer's files changed: before:$before after:$after"
  fi
  shipped=$(stat_of "$tmp/root$DEFAULTS" | sed 's/^[^ ]* //')
  if [ "$(stat_of "$DEFAULTS")" = "root:root $shipped" ] && [ "$(grep -c '^ARGS=' "$DEFAULTS")" = 1 ]; then
    ok "$name: $DEFAULTS rewritten with one ARGS= line, root:root $shipped as shipped"
  else
    bad "$name: $DEFAULTS is $(stat_of "$DEFAULTS") with $(grep -c '^ARGS=' "$DEFAULTS") ARGS= lines (shipped: root:root $shipped)"
  fi
  case $name in
    sckyzo) serve_check "$name" "$SCKYZO_MAPPING" "$PEER_STATE/sckyzo_exporter_metrics.txt" 9341 \
      'slurm_license_total{license="matlab"} 10' ;;
    rivosinc) serve_check "$name" "$RIVOSINC_MAPPING" "$PEER_STATE/rivosinc_exporter_metrics.txt" 9092 \
      'slurm_lic_total{name="matlab"} 10' ;;
  esac
  if dpkg_locked --purge "$PKG"; then ok "$name: dpkg --purge $PKG"; else bad "$name: dpkg --purge $PKG"; show "$tmp/dpkg.log"; fi
  unplant
}

why=""
for f in $PLANTED /etc/default/slurm_exporter; do
  if [ -e "$f" ] || [ -L "$f" ]; then why="$f exists on this machine; not touching it"; break; fi
done
for t in runuser curl python3; do
  [ -n "$why" ] || command -v "$t" >/dev/null 2>&1 || why="$t not found"
done
[ -n "$why" ] || [ -x "$FAKE_SLURMCTLD" ] || why="$FAKE_SLURMCTLD not built (make $FAKE_SLURMCTLD)"
if [ -n "$why" ]; then
  skip "over SckyzO's and rivosinc's installations: $why"
else
  for p in sckyzo rivosinc rivosinc-bare; do peer_case "$p"; done
fi
if [ "$user_existed" = 0 ]; then
  remove_user || bad "could not remove the user $PKG the test created"
fi
installed_by_us=0

finish
