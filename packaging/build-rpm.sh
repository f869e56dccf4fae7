#!/bin/sh
# Build the RPM of slurm-exporter-shim.
#
#   sh packaging/build-rpm.sh [rpmbuild options]
#
# Makes Source0 (slurm-exporter-shim-VERSION.tar.gz, top directory
# slurm-exporter-shim-VERSION/) from the files git tracks plus untracked files
# that .gitignore does not exclude, runs "rpmbuild -bb" in a temporary
# _topdir and copies the binary RPMs into build/ at the repository root (OUTDIR: another directory).
#
# On a host that is not RPM-based (Debian), set FOREIGN=1: the BuildRequires
# are then not checked (--nodeps; the Debian -dev packages stand in for them),
# no debuginfo package is made, and the systemd scriptlet macros, which come
# from systemd-rpm-macros, are replaced by no-ops. Such an RPM is only good
# for inspection (rpm -qlp, rpmlint), not for installing on RHEL.
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
spec_version=$(sed -n 's/^Version:[[:space:]]*//p' packaging/rpm/slurm-exporter-shim.spec)
if [ "$spec_version" != "$version" ]; then
  echo "build-rpm: VERSION is $version but the spec says $spec_version" >&2
  exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/slurm-exporter-shim-rpm.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
mkdir -p "$tmp/SOURCES" "$tmp/stage/slurm-exporter-shim-$version"
stage="$tmp/stage/slurm-exporter-shim-$version"

if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git -C "$root" ls-files -z --cached --others --exclude-standard |
    (cd "$root" && xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh) |
    tar -C "$root" --null -T - -cf - | tar -C "$stage" -xf -
else
  tar -C "$root" --exclude=./.git --exclude=./build --exclude=./build-asan \
      --exclude=./build-fuzz --exclude=./slurm-exporter-shim -cf - . |
    tar -C "$stage" -xf -
fi
# --version's revision (the tarball is no git checkout: the Makefile reads this file)
rev=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null) &&
  { git -C "$root" diff --quiet HEAD -- 2>/dev/null || rev="$rev-dirty"; } && printf '%s\n' "$rev" >"$stage/REVISION"
tar -C "$tmp/stage" -czf "$tmp/SOURCES/slurm-exporter-shim-$version.tar.gz" \
    "slurm-exporter-shim-$version"

if [ "${FOREIGN:-0}" = 1 ]; then
  set -- --nodeps \
    --define 'debug_package %{nil}' \
    --define 'systemd_requires %{nil}' \
    --define 'systemd_post() : systemd_post %*' \
    --define 'systemd_preun() : systemd_preun %*' \
    --define 'systemd_postun_with_restart() : systemd_postun_with_restart %*' \
    "$@"
fi

rpmbuild -bb --define "_topdir $tmp" "$@" packaging/rpm/slurm-exporter-shim.spec

mkdir -p "$out"
for f in "$tmp"/RPMS/*/*.rpm; do
  [ -e "$f" ] || continue
  cp -f "$f" "$out/"
  echo "build-rpm: $out/${f##*/}"
done
