#!/bin/sh
# Build the Debian package of slurm-exporter-shim.
#
#   sh packaging/build-deb.sh [dpkg-buildpackage options]
#
# The repository keeps its Debian packaging in packaging/debian, not at the
# top level. This script copies the source tree (the files git tracks plus
# untracked files that .gitignore does not exclude; build products are left
# out) to a temporary directory, puts packaging/debian there as ./debian,
# runs "dpkg-buildpackage -us -uc -b" and copies the resulting .deb files
# (plus .buildinfo and .changes) into build/ at the repository root, or into
# $OUTDIR when that is set (nothing else in the repository is written). When
# lintian is installed it then runs on the result, and the script fails if
# lintian reports an error.
#
# Build products are never copied, even when .gitignore does not list them:
# top-level build*/ directories, the top-level slurm-exporter-shim binary,
# *.o and *.a files, tests/bench/out/ and .git.
#
# Needs: dpkg-dev, debhelper and the Build-Depends of packaging/debian/control
# (dpkg-buildpackage lists missing ones; scripts/install-deps.sh build
# installs the libraries). No fakeroot: the package sets Rules-Requires-Root: no.
# Set KEEP_TMP=1 to keep the temporary directory.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
# OUTDIR may be relative to the caller's directory.
if [ -n "${OUTDIR:-}" ]; then
  mkdir -p "$OUTDIR"
  out=$(cd "$OUTDIR" && pwd)
else
  out="$root/build"
fi
cd "$root"

version=$(cat VERSION)
deb_version=$(dpkg-parsechangelog -l packaging/debian/changelog -S Version)
case "$deb_version" in
  "$version"-*) ;;
  *)
    echo "build-deb: VERSION is $version but packaging/debian/changelog is at $deb_version;" >&2
    echo "build-deb: add a changelog entry (dch -c packaging/debian/changelog -v $version-1)" >&2
    exit 1 ;;
esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/slurm-exporter-shim-deb.XXXXXX")
cleanup() {
  if [ "${KEEP_TMP:-0}" = 1 ]; then
    echo "build-deb: kept $tmp" >&2
  else
    rm -rf "$tmp"
  fi
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

src="$tmp/slurm-exporter-shim-$version"
mkdir -p "$src"

# Copy the tree. Without git (e.g. an unpacked tarball), copy everything
# except version-control data and build products.
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git -C "$root" ls-files -z --cached --others --exclude-standard |
    (cd "$root" && xargs -0 sh -c '
      for f; do
        case $f in
          build*/*|slurm-exporter-shim|*.o|*.a|tests/bench/out/*|.git/*) continue ;;
        esac
        if [ -e "$f" ]; then printf "%s\0" "$f"; fi
      done' sh) |
    tar -C "$root" --null -T - -cf - | tar -C "$src" -xf -
else
  tar -C "$root" --exclude=./.git --exclude='./build*' --exclude='*.o' --exclude='*.a' \
      --exclude=./bench/out --exclude=./slurm-exporter-shim -cf - . |
    tar -C "$src" -xf -
fi
rm -rf "$src/debian"
cp -a "$root/packaging/debian" "$src/debian"
# --version's revision (the copy is no git checkout: the Makefile reads this file)
rev=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null) &&
  { git -C "$root" diff --quiet HEAD -- 2>/dev/null || rev="$rev-dirty"; } && printf '%s\n' "$rev" >"$src/REVISION"

# When this script runs under make (make test, make asan), make's command-line
# variables reach the package build through MAKEFLAGS and the environment:
# "make asan" would otherwise build the package with -fsanitize instead of
# the hardening flags and with BUILD=build-asan, and -s would hide the
# compiler commands. An exported CFLAGS/CPPFLAGS/LDFLAGS also replaces what
# dpkg-buildflags gives (hardening=+all in debian/rules). The package build
# uses the Makefile's defaults and dpkg-buildflags only; to adjust the flags,
# use DEB_CFLAGS_APPEND and friends (dpkg-buildflags(1)).
unset MAKEFLAGS MFLAGS GNUMAKEFLAGS MAKELEVEL MAKEOVERRIDES \
  CFLAGS CPPFLAGS CXXFLAGS LDFLAGS \
  BUILD BIN PREFIX SYSCONFDIR DESTDIR BINDIR MANDIR DOCDIR UNITDIR || true
(cd "$src" && dpkg-buildpackage -us -uc -b "$@")

mkdir -p "$out"
found=0
for f in "$tmp"/*.deb "$tmp"/*.ddeb "$tmp"/*.buildinfo "$tmp"/*.changes; do
  [ -e "$f" ] || continue
  cp -f "$f" "$out/"
  case $out in
    "$root"/*) echo "build-deb: ${out#"$root"/}/${f##*/}" ;;
    *) echo "build-deb: $out/${f##*/}" ;;
  esac
  found=1
done
if [ "$found" = 0 ]; then
  echo "build-deb: dpkg-buildpackage produced no package" >&2
  exit 1
fi

if command -v lintian >/dev/null 2>&1; then
  changes=$(ls "$tmp"/*.changes | head -n 1)
  echo "build-deb: lintian $(basename "$changes")"
  lintian --fail-on error --info --display-info "$changes"
else
  echo "build-deb: lintian not installed; skipped (apt-get install lintian)" >&2
fi
