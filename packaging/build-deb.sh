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
# (plus .buildinfo and .changes) into build/ at the repository root. When
# lintian is installed it then runs on the result, and the script fails if
# lintian reports an error.
#
# Needs: dpkg-dev, debhelper and the Build-Depends of packaging/debian/control
# (dpkg-buildpackage lists missing ones; scripts/install-deps.sh build
# installs the libraries). No fakeroot: the package sets Rules-Requires-Root: no.
# Set KEEP_TMP=1 to keep the temporary directory.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
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
    (cd "$root" && xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh) |
    tar -C "$root" --null -T - -cf - | tar -C "$src" -xf -
else
  tar -C "$root" --exclude=./.git --exclude=./build --exclude=./build-asan \
      --exclude=./build-fuzz --exclude=./slurm-exporter-shim -cf - . |
    tar -C "$src" -xf -
fi
rm -rf "$src/debian"
cp -a "$root/packaging/debian" "$src/debian"

(cd "$src" && dpkg-buildpackage -us -uc -b "$@")

mkdir -p "$root/build"
found=0
for f in "$tmp"/*.deb "$tmp"/*.ddeb "$tmp"/*.buildinfo "$tmp"/*.changes; do
  [ -e "$f" ] || continue
  cp -f "$f" "$root/build/"
  echo "build-deb: build/${f##*/}"
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
