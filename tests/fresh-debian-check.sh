#!/bin/sh
# Run README's commands on a fresh Debian 12 (bookworm) minbase root, to prove that
# scripts/install-deps.sh installs everything the build and the tests use (a developer machine
# always has more installed than a new one). Not run by scripts/test.sh: it downloads a Debian base
# system and the packages (about 1 GB) and takes from ten minutes (--quick) to an hour.
#
#   sudo tests/fresh-debian-check.sh [--quick] [ROOT]
#
# ROOT (default /var/tmp/shim-fresh-debian) is made with debootstrap --variant=minbase unless it is
# there already; the committed HEAD of this repository is cloned into ROOT/root/shim (uncommitted
# changes are not part of the check). In the root it runs, as README says:
#   ./scripts/run.sh --once       (installs the build packages, builds, prints one scrape of the capture)
#   ./scripts/run.sh              (serving, on a random loopback port: /metrics scraped once, then stopped)
#   ./scripts/test.sh             (installs the test packages, runs every suite)
# SHARED=DIR copies DIR into the root as ../shared beside the clone (as a checkout may have it; the
# project never reads it).
# --quick runs `./scripts/install-deps.sh all`, `make -s` and `make -s test` instead of test.sh
# (no ASan, TSan, valgrind or fuzzing rounds). Needs root, debootstrap, git and network access to a
# Debian mirror (MIRROR, default http://deb.debian.org/debian). Exit status: that of the last command.
set -eu
quick=0
if [ "${1:-}" = --quick ]; then
	quick=1
	shift
fi
root=${1:-/var/tmp/shim-fresh-debian}
mirror=${MIRROR:-http://deb.debian.org/debian}
repo=$(cd "$(dirname "$0")/.." && pwd)

if [ "$(id -u)" -ne 0 ]; then
	echo "fresh-debian-check: needs root (debootstrap, chroot, mount)" >&2
	exit 2
fi
for t in debootstrap git chroot mount; do
	command -v "$t" >/dev/null 2>&1 || { echo "fresh-debian-check: $t is missing (apt-get install debootstrap git)" >&2; exit 2; }
done

if [ ! -x "$root/usr/bin/apt-get" ]; then
	echo "fresh-debian-check: debootstrap --variant=minbase bookworm $root" >&2
	debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.debootstrap.log" 2>&1 ||
		{ echo "fresh-debian-check: debootstrap failed, see $root.debootstrap.log" >&2; exit 1; }
fi

mounted=""
cleanup() {
	for m in $mounted; do umount "$root$m" 2>/dev/null || umount -l "$root$m" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# innermost last, so that cleanup (which goes in this order reversed) unmounts /dev/pts before /dev
for m in /proc /sys /dev /dev/pts; do
	mkdir -p "$root$m"
	if [ "$m" = /proc ]; then mount -t proc proc "$root/proc"; else mount --bind "$m" "$root$m"; fi
	mounted="$m $mounted"
done
cp /etc/resolv.conf "$root/etc/resolv.conf"

rm -rf "$root/root/shim" "$root/root/shared"
git clone -q "$repo" "$root/root/shim"
if [ -n "${SHARED:-}" ]; then cp -a "$SHARED" "$root/root/shared"; fi
echo "fresh-debian-check: $(git -C "$root/root/shim" log --oneline -1) in $root" >&2

in_root() { chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 /bin/sh -c "cd /root/shim && $1"; }
in_root './scripts/run.sh --once >/tmp/run-once.txt && grep -q "^slurm_cpus_total " /tmp/run-once.txt'
echo "fresh-debian-check: ./scripts/run.sh --once printed the metrics" >&2
# serving: run.sh in the background (under timeout, which passes SIGTERM on to the shim run.sh
# execs), /metrics read with bash's /dev/tcp (no curl before test.sh installs it)
port=$((20000 + $$ % 12000)) # below the kernel's ephemeral ports (32768 up)
cat >"$root/tmp/serve-check.sh" <<SERVE
timeout 300 ./scripts/run.sh --web.listen-address 127.0.0.1:$port >/tmp/run-serve.log 2>&1 &
pid=\$!
i=0
while [ \$i -lt 120 ]; do
	bash -c 'exec 3<>/dev/tcp/127.0.0.1/$port && printf "GET /metrics HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n" >&3 && cat <&3' >/tmp/run-serve.txt 2>/dev/null &&
		grep -q '^slurm_cpus_total ' /tmp/run-serve.txt && break
	sleep 1
	i=\$((i + 1))
done
kill \$pid
wait \$pid
grep -q '^slurm_cpus_total ' /tmp/run-serve.txt || { cat /tmp/run-serve.log; exit 1; }
SERVE
in_root 'sh /tmp/serve-check.sh'
echo "fresh-debian-check: ./scripts/run.sh served /metrics on 127.0.0.1:$port" >&2
if [ "$quick" -eq 1 ]; then
	in_root './scripts/install-deps.sh all && make -s && make -s test'
else
	in_root './scripts/test.sh'
fi
echo "fresh-debian-check: passed" >&2
