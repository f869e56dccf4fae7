#!/bin/sh
# Install the Debian packages slurm-exporter-shim needs to build and test.
# Idempotent: installs only what is missing. Usage: scripts/install-deps.sh [build|test|all]
set -eu
what=${1:-all}
# Every command the Makefile, scripts/ and tests/ run, checked on a minbase Debian 12 root
# (tests/fresh-debian-check.sh). Installed without recommends, so what a package only recommends is
# named here: libc6-dev (gcc), libclang-rt-dev (clang: ASan, UBSan, libFuzzer runtimes), python3.
#   build: the compiler, the headers and libraries (libdeflate-dev: the gzip answers, compress.c)
#   test:  cmocka, valgrind, clang runtimes; zlib1g-dev (the tests and bench decompress the gzip
#          answers with zlib, and bench_gzip measures zlib against libdeflate); curl, openssl (test_tls), wrk (test_load), prometheus and
#          promtool (test_prometheus), python3 (test_docs, prom_check.py, bench), git (build-deb.sh,
#          test_packaging), dpkg-dev, debhelper, lintian, systemd (systemd-analyze), man-db (man),
#          adduser and procps (/bin/kill of the unit's ExecReload) for the package; chromium
#          (test_status_browser: the status page opened in a real headless browser, what a person sees)
build="gcc libc6-dev make pkg-config libmicrohttpd-dev libjansson-dev libcurl4-openssl-dev libyaml-dev libyajl-dev libgnutls28-dev libcrypt-dev libdeflate-dev"
test="wrk openssl libcmocka-dev zlib1g-dev valgrind curl prometheus clang libclang-rt-dev build-essential dpkg-dev debhelper lintian systemd man-db adduser procps git python3 chromium"
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
# Another apt or dpkg (unattended-upgrades, a second run) may hold the lock: wait for it, up to
# 10 minutes, instead of failing at once (apt's DPkg::Lock::Timeout, apt 1.9.11 and later).
lock="-o DPkg::Lock::Timeout=600"
$SUDO apt-get $lock update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get $lock install -y -qq --no-install-recommends $missing >/dev/null
