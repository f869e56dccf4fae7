#!/bin/sh
# Install the Debian packages slurm-exporter-shim needs to build and test.
# Idempotent: installs only what is missing. Usage: scripts/install-deps.sh [build|test|all]
set -eu
what=${1:-all}
build="gcc make pkg-config libmicrohttpd-dev libjansson-dev libcurl4-openssl-dev libyaml-dev libgnutls28-dev libcrypt-dev"
test="wrk openssl libcmocka-dev valgrind curl prometheus clang build-essential dpkg-dev debhelper lintian systemd man-db adduser"
case "$what" in
  build) pkgs="$build" ;;
  test|all) pkgs="$build $test" ;;
  *) echo "usage: $0 [build|test|all]" >&2; exit 2 ;;
esac
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "install-deps: installing:$missing" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
