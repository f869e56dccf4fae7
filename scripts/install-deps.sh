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
#          promtool (test_prometheus), prometheus-node-exporter (test_node_load: the real node_exporter
#          scraped beside the shim), python3 (test_docs, prom_check.py, bench), git (build-deb.sh,
#          test_packaging), dpkg-dev, debhelper, lintian, systemd (systemd-analyze), man-db (man),
#          adduser and procps (/bin/kill of the unit's ExecReload) for the package; rpm (test_rpm: rpmbuild,
#          rpm2archive); chromium
#          (test_status_browser: the status page opened in a real headless browser, what a person sees)
build="gcc libc6-dev make pkg-config libmicrohttpd-dev libjansson-dev libcurl4-openssl-dev libyaml-dev libyajl-dev libgnutls28-dev libcrypt-dev libdeflate-dev"
test="wrk openssl libcmocka-dev zlib1g-dev valgrind curl prometheus prometheus-node-exporter clang libclang-rt-dev build-essential dpkg-dev debhelper lintian systemd man-db adduser procps git python3 rpm chromium"
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
# Another apt or dpkg (unattended-upgrades, apt-daily's update at boot, a second run) may hold a lock:
# wait for it, up to LOCK_WAIT seconds (10 minutes), instead of failing at once. apt's
# DPkg::Lock::Timeout (apt 1.9.11 and later) waits for dpkg's lock only: apt-get update's
# /var/lib/apt/lists/lock and the download lock /var/cache/apt/archives/lock fail at once (apt 2.6), so
# a run that failed on "Could not get lock" is tried again every 5 s until LOCK_WAIT has passed.
wait=${LOCK_WAIT:-600}
err=$(mktemp "${TMPDIR:-/tmp}/install-deps.XXXXXX")
trap 'rm -f "$err"' EXIT
apt_get() {
	t0=$(date +%s) said=""
	while ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout="$wait" "$@" 2>"$err"; do
		if ! grep -q 'Could not get lock' "$err"; then
			cat "$err" >&2
			return 1
		fi
		if [ $(($(date +%s) - t0)) -ge "$wait" ]; then
			cat "$err" >&2
			echo "install-deps: another apt still holds the lock after ${wait} s; run it again later" >&2
			return 1
		fi
		[ -n "$said" ] || echo "install-deps: another apt holds the lock ($(sed -n 's/^E: Could not get lock \([^ ]*[^ .]\).*/\1/p' "$err" | head -n 1)): waiting for it, up to ${wait} s" >&2
		said=1
		sleep 5
	done
	cat "$err" >&2
}
apt_get update -qq
# shellcheck disable=SC2086 # one word per package
apt_get install -y -qq --no-install-recommends $missing >/dev/null
